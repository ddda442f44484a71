import { type ChildProcess, spawn } from "node:child_process"
import { createRequire } from "node:module"
import { createServer } from "node:net"
import { dirname, join } from "node:path"

/** Mnemonic of anvil's ten funded dev accounts, for viem's `mnemonicToAccount(anvilMnemonic, { addressIndex })`. */
export const anvilMnemonic = "test test test test test test test test test test test junk"

/** Options of {@link startAnvil}. */
export interface AnvilOptions {
  /** Chain id the node reports; 31337 (anvil's own default) when absent. */
  readonly chainId?: number
  /** Mine a block every this many seconds instead of on each transaction (anvil's automine) when given. */
  readonly blockTimeSeconds?: number
  /** How long to wait, in all, for the node to answer before giving up, in milliseconds; 10 000 when absent. */
  readonly startupTimeoutMs?: number
}

/** A running anvil node. */
export interface AnvilInstance {
  /** The node's HTTP JSON-RPC endpoint, on 127.0.0.1. */
  readonly rpcUrl: string
  /** The chain id the node reports. */
  readonly chainId: number
  /** The TCP port the node listens on. */
  readonly port: number
  /** Stops the node and resolves once its process has exited; calling it again is harmless. */
  readonly stop: () => Promise<void>
}

const defaultChainId = 31337
const defaultStartupTimeoutMs = 10_000
/** A free port can be taken by another process between our probe and anvil's bind; then we try another. */
const maxAttempts = 5
const pollIntervalMs = 20
/** How long `stop` waits after SIGTERM before it sends SIGKILL. */
const killGraceMs = 3_000

/** The anvil executable of the platform package that `@foundry-rs/anvil` installs for this machine. */
const anvilBinary = (): string => {
  const os = process.platform
  const cpu = process.arch === "x64" ? "amd64" : process.arch
  const packageName = `@foundry-rs/anvil-${os}-${cpu}`
  let packageJson: string
  try {
    packageJson = createRequire(import.meta.url).resolve(`${packageName}/package.json`)
  } catch (cause) {
    throw new Error(`anvil: ${packageName} is not installed (is @foundry-rs/anvil a dependency?)`, { cause })
  }
  return join(dirname(packageJson), "bin", os === "win32" ? "anvil.exe" : "anvil")
}

/** A TCP port that was free a moment ago: the one the OS picks for a server bound to port 0. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close((error) => (error ? reject(error) : port > 0 ? resolve(port) : reject(new Error("no port"))))
    })
  })

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** The chain id the node at `rpcUrl` reports, or undefined while it does not answer. */
const queryChainId = async (rpcUrl: string): Promise<number | undefined> => {
  try {
    const response = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      signal: AbortSignal.timeout(1_000)
    })
    if (!response.ok) return undefined
    const body: unknown = await response.json()
    const result = typeof body === "object" && body !== null && "result" in body ? body.result : undefined
    return typeof result === "string" ? Number.parseInt(result, 16) : undefined
  } catch {
    return undefined
  }
}

/** Resolves when `child` has exited (at once if it already has). */
const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once("exit", () => resolve()))

/** Kills `child` and waits for it to exit: SIGTERM, then SIGKILL if it lingers. */
const terminate = async (child: ChildProcess): Promise<void> => {
  const done = exited(child)
  child.kill("SIGTERM")
  const lingering = setTimeout(() => child.kill("SIGKILL"), killGraceMs)
  await done
  clearTimeout(lingering)
}

type Attempt =
  | { readonly ok: true; readonly instance: AnvilInstance }
  | { readonly ok: false; readonly error: string; readonly retry: boolean }

/** Spawns anvil once on a fresh free port; a failure that another port may cure is marked `retry`. */
const attemptStart = async (
  binary: string,
  chainId: number,
  blockTimeSeconds: number | undefined,
  deadline: number
): Promise<Attempt> => {
  const port = await freePort()
  const rpcUrl = `http://127.0.0.1:${port}`
  const args = [
    ...["--host", "127.0.0.1", "--port", String(port), "--chain-id", String(chainId), "--quiet"],
    ...(blockTimeSeconds === undefined ? [] : ["--block-time", String(blockTimeSeconds)])
  ]
  const child = spawn(binary, [...args, "--mnemonic", anvilMnemonic], { stdio: ["ignore", "ignore", "pipe"] })

  let stderr = ""
  child.stderr?.setEncoding("utf8")
  child.stderr?.on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-4_000)
  })
  let spawnError: Error | undefined
  child.once("error", (error) => {
    spawnError = error
  })
  // Never leave an orphaned node behind if the host process exits without calling stop().
  const killOnExit = () => child.kill("SIGKILL")
  process.once("exit", killOnExit)

  while (Date.now() < deadline) {
    if (spawnError !== undefined) {
      process.removeListener("exit", killOnExit)
      return { ok: false, error: `anvil could not be spawned: ${spawnError.message}`, retry: false }
    }
    if (child.exitCode !== null || child.signalCode !== null) {
      process.removeListener("exit", killOnExit)
      // Most likely the port was taken between our probe and anvil's bind ("Address already in use").
      const status = child.exitCode ?? child.signalCode
      return { ok: false, error: `anvil on port ${port} exited with ${status}: ${stderr.trim()}`, retry: true }
    }
    const reported = await queryChainId(rpcUrl)
    if (reported !== undefined) {
      if (reported !== chainId) {
        await terminate(child)
        process.removeListener("exit", killOnExit)
        // Another node answered on this port: ours failed to bind and is exiting, or is about to.
        return { ok: false, error: `port ${port} answers with chain id ${reported}, not ${chainId}`, retry: true }
      }
      let stopping: Promise<void> | undefined
      const stop = () => {
        stopping ??= terminate(child).finally(() => process.removeListener("exit", killOnExit))
        return stopping
      }
      return { ok: true, instance: { rpcUrl, chainId, port, stop } }
    }
    await sleep(pollIntervalMs)
  }
  await terminate(child)
  process.removeListener("exit", killOnExit)
  return { ok: false, error: `anvil on port ${port} did not answer in time: ${stderr.trim()}`, retry: false }
}

/** Starts anvil on 127.0.0.1 and a free port (dev accounts from {@link anvilMnemonic}) once it answers; `stop()` it. */
export const startAnvil = async (options: AnvilOptions = {}): Promise<AnvilInstance> => {
  const chainId = options.chainId ?? defaultChainId
  const deadline = Date.now() + (options.startupTimeoutMs ?? defaultStartupTimeoutMs)
  const binary = anvilBinary()
  const failures: Array<string> = []
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const result = await attemptStart(binary, chainId, options.blockTimeSeconds, deadline)
    if (result.ok) return result.instance
    failures.push(result.error)
    if (!result.retry || Date.now() >= deadline) break
  }
  throw new Error(`anvil did not start:\n${failures.join("\n")}`)
}
