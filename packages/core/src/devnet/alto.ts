import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import type { Address, Hex } from "viem"
import { freePort } from "./anvil"

/** Options of {@link startAlto}. */
export interface AltoOptions {
  /** The node alto bundles for (anvil's URL). */
  readonly rpcUrl: string
  /** The EntryPoints it serves (v0.7's canonical address for walletgate). */
  readonly entryPoints: ReadonlyArray<Address>
  /** Keys of the accounts that send bundles and pay their gas (funded dev accounts): one bundle in flight each. */
  readonly executorKeys: ReadonlyArray<Hex>
  /** Key of the account that refills the executors and deploys alto's simulation contracts. */
  readonly utilityKey: Hex
  /** The node's block time in ms (alto's polling follows it); 1000 when absent. */
  readonly blockTimeMs?: number
  /** Bundling interval bounds in ms; 50 / 200 when absent (alto's 100 / 1000 cost ≈ 300 ms of p50 on automine). */
  readonly minBundleIntervalMs?: number
  readonly maxBundleIntervalMs?: number
  /** How long to wait for `eth_supportedEntryPoints` to answer; 60 s when absent. */
  readonly startupTimeoutMs?: number
  /**
   * Serve alto's `debug_bundler_*` methods (bundling mode, mempool dump, send a bundle now): for tests that choose
   * what a bundle holds. Off when absent.
   */
  readonly debugEndpoints?: boolean
}

/** A running alto bundler. */
export interface AltoInstance {
  /** Its ERC-7769 JSON-RPC endpoint (alto listens on every interface; we talk to it on 127.0.0.1). */
  readonly bundlerUrl: string
  readonly port: number
  /** How long it took to answer `eth_supportedEntryPoints`, in ms. */
  readonly startupMs: number
  /** Stops alto and everything it spawned (its process group); resolves once it has exited. Idempotent. */
  readonly stop: () => Promise<void>
}

const maxAttempts = 3
const pollIntervalMs = 50
const killGraceMs = 3_000

/**
 * alto's CLI entry, run with the Node that runs us (22, like the project): the single-file copy of the installed
 * version that the repository's build bundles into `node_modules/.cache/walletgate/` when it exists (the same code,
 * loaded in about half the CPU time of its 600 modules), else the package's own `esm/cli/alto.js`.
 */
const altoEntry = (): string => {
  let main: string
  try {
    // The package exports only its main module (`esm/index.js`); the CLI sits beside it.
    main = createRequire(import.meta.url).resolve("@pimlico/alto")
  } catch (cause) {
    throw new Error("alto: @pimlico/alto is not installed (it is a dev dependency of the repository)", { cause })
  }
  const bundled = altoBundlePath(join(dirname(main), ".."))
  return bundled !== undefined && existsSync(bundled) ? bundled : join(dirname(main), "cli", "alto.js")
}

/**
 * Where the single-file copy of the alto package in `packageDir` (`…/node_modules/@pimlico/alto`) lives:
 * `node_modules/.cache/walletgate/alto-<version>.mjs` beside it; undefined when its manifest cannot be read.
 */
const altoBundlePath = (packageDir: string): string | undefined => {
  try {
    const { version } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { version?: unknown }
    if (typeof version !== "string") return undefined
    return join(packageDir, "..", "..", ".cache", "walletgate", `alto-${version}.mjs`)
  } catch {
    return undefined
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** The EntryPoints alto at `url` serves, or undefined while it does not answer. */
const supportedEntryPoints = async (url: string): Promise<ReadonlyArray<string> | undefined> => {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_supportedEntryPoints", params: [] }),
      signal: AbortSignal.timeout(1_000)
    })
    if (!response.ok) return undefined
    const body: unknown = await response.json()
    const result = typeof body === "object" && body !== null && "result" in body ? body.result : undefined
    return Array.isArray(result) ? result.map(String) : undefined
  } catch {
    return undefined
  }
}

const hasExited = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null

/** Signals alto's whole process group (it was spawned detached, as the group's leader). */
const signalGroup = (child: ChildProcess, signal: NodeJS.Signals): void => {
  if (child.pid === undefined) return
  try {
    process.kill(-child.pid, signal)
  } catch {
    // The group is already gone.
  }
}

/** SIGTERM to the group, SIGKILL if it lingers; resolves when the leader has exited. */
const terminateGroup = async (child: ChildProcess): Promise<void> => {
  const done = hasExited(child)
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once("exit", () => resolve()))
  signalGroup(child, "SIGTERM")
  const lingering = setTimeout(() => signalGroup(child, "SIGKILL"), killGraceMs)
  await done
  clearTimeout(lingering)
  // Whatever alto left in its group (workers) goes with it.
  signalGroup(child, "SIGKILL")
}

type Attempt =
  | { readonly ok: true; readonly instance: AltoInstance }
  | { readonly ok: false; readonly error: string; readonly retry: boolean }

const attemptStart = async (options: AltoOptions, deadline: number): Promise<Attempt> => {
  const port = await freePort()
  const bundlerUrl = `http://127.0.0.1:${port}`
  const started = Date.now()
  const args = [
    altoEntry(),
    "--entrypoints",
    options.entryPoints.join(","),
    "--rpc-url",
    options.rpcUrl,
    "--port",
    String(port),
    // anvil has no ERC-7562 tracer for `debug_traceCall`.
    "--safe-mode",
    "false",
    "--deploy-simulations-contract",
    "true",
    "--block-time",
    String(options.blockTimeMs ?? 1_000),
    "--min-bundle-interval",
    String(options.minBundleIntervalMs ?? 50),
    "--max-bundle-interval",
    String(options.maxBundleIntervalMs ?? 200),
    "--log-level",
    "warn",
    ...(options.debugEndpoints === true ? ["--enable-debug-endpoints", "true"] : [])
  ]
  // Keys go through alto's environment, not its command line (which `ps` shows to every user).
  const env: NodeJS.ProcessEnv = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("ALTO_"))),
    ALTO_EXECUTOR_PRIVATE_KEYS: options.executorKeys.join(","),
    ALTO_UTILITY_PRIVATE_KEY: options.utilityKey
  }
  const child = spawn(process.execPath, args, { env, detached: true, stdio: ["ignore", "ignore", "pipe"] })
  let output = ""
  child.stderr?.setEncoding("utf8")
  child.stderr?.on("data", (chunk: string) => {
    output = (output + chunk).slice(-4_000)
  })
  let spawnError: Error | undefined
  child.once("error", (error) => {
    spawnError = error
  })
  // Never leave a bundler behind if the host process exits without calling stop().
  const killOnExit = () => signalGroup(child, "SIGKILL")
  process.once("exit", killOnExit)
  const giveUp = async (error: string, retry: boolean): Promise<Attempt> => {
    await terminateGroup(child)
    process.removeListener("exit", killOnExit)
    return { ok: false, error, retry }
  }

  while (Date.now() < deadline) {
    if (spawnError !== undefined) return giveUp(`alto could not be spawned: ${spawnError.message}`, false)
    if (hasExited(child)) {
      const status = child.exitCode ?? child.signalCode
      return giveUp(`alto on port ${port} exited with ${status}: ${output.trim()}`, true)
    }
    const entryPoints = await supportedEntryPoints(bundlerUrl)
    if (entryPoints !== undefined) {
      const wanted = options.entryPoints.map((address) => address.toLowerCase())
      if (!wanted.every((address) => entryPoints.some((served) => served.toLowerCase() === address))) {
        // Another bundler answered on this port.
        return giveUp(`port ${port} serves ${entryPoints.join(", ")}, not ${wanted.join(", ")}`, true)
      }
      let stopping: Promise<void> | undefined
      const stop = () => {
        stopping ??= terminateGroup(child).finally(() => process.removeListener("exit", killOnExit))
        return stopping
      }
      return { ok: true, instance: { bundlerUrl, port, startupMs: Date.now() - started, stop } }
    }
    await sleep(pollIntervalMs)
  }
  return giveUp(`alto on port ${port} did not answer in time: ${output.trim()}`, false)
}

/**
 * Starts the alto bundler (`@pimlico/alto`, local, dev and test use only) beside a node, on a free port, logging at
 * warn level, and resolves once `eth_supportedEntryPoints` answers with the EntryPoints asked for; `stop()` it.
 */
export const startAlto = async (options: AltoOptions): Promise<AltoInstance> => {
  const deadline = Date.now() + (options.startupTimeoutMs ?? 60_000)
  const failures: Array<string> = []
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const result = await attemptStart(options, deadline)
    if (result.ok) return result.instance
    failures.push(result.error)
    if (!result.retry || Date.now() >= deadline) break
  }
  throw new Error(`alto did not start:\n${failures.join("\n")}`)
}
