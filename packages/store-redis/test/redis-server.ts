// A real redis-server for tests and benchmarks: its own process on 127.0.0.1 and a free port, no
// persistence, stopped by the caller. Plain TypeScript that Node runs as is (bench/ imports it).
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createConnection, createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** A running redis-server that the caller controls. */
export interface RedisServer {
  readonly port: number
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string
  /** The TLS port, when started with {@link RedisServerOptions.tls}. */
  readonly tlsPort: number | undefined
  /** Kills the server as a crash would (SIGKILL) and waits for it to exit. */
  crash(): Promise<void>
  /** Suspends the server (SIGSTOP): connections stay open and nothing is answered. */
  freeze(): void
  /** Resumes a frozen server (SIGCONT). */
  thaw(): void
  /** Starts the server again on the same port, empty, after {@link crash} or {@link stop}. */
  restart(): Promise<void>
  /** Stops the server and waits for it to exit; does nothing if it is not running. */
  stop(): Promise<void>
}

/** Options of {@link startRedisServer}. */
export interface RedisServerOptions {
  /** Run as a one-node Redis Cluster owning every slot, so that cross-slot scripts are refused. */
  readonly cluster?: boolean
  /** Also serve TLS on another free port, with this certificate and key (PEM files); clients need no certificate. */
  readonly tls?: { readonly certFile: string; readonly keyFile: string }
}

const INSTALL_HINT =
  "redis-server is not installed (or not on PATH). Run `bash scripts/ensure-tools.sh` (as root it installs " +
  "Debian's redis-server), or install Redis 7 yourself."

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/** Sends inline commands, then QUIT, and returns every byte the server answered. */
const ask = (port: number, commands: ReadonlyArray<string>) =>
  new Promise<string>((resolve, reject) => {
    const socket = createConnection({ host: "127.0.0.1", port })
    let answer = ""
    socket.setEncoding("utf8")
    socket.on("data", (chunk: string) => {
      answer += chunk
    })
    socket.once("error", reject)
    socket.once("end", () => resolve(answer))
    socket.write(`${[...commands, "QUIT"].join("\r\n")}\r\n`)
  })

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once("exit", () => resolve()))

/** Starts redis-server on a free port and waits until it answers PING (and, for a cluster, owns every slot). */
export const startRedisServer = async (options: RedisServerOptions = {}): Promise<RedisServer> => {
  const probe = spawnSync("redis-server", ["--version"], { encoding: "utf8" })
  if (probe.error !== undefined || probe.status !== 0) throw new Error(INSTALL_HINT)

  const dir = mkdtempSync(join(tmpdir(), "walletgate-redis-"))
  const tlsPort = options.tls === undefined ? undefined : await freePort()
  const args = (port: number) => [
    ...["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
    // A lone cluster node does not know its own address; unannounced, CLUSTER SLOTS names no host.
    ...(options.cluster === true
      ? ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-announce-ip", "127.0.0.1"]
      : []),
    ...(options.tls === undefined || tlsPort === undefined
      ? []
      : [
          ...["--tls-port", String(tlsPort), "--tls-cert-file", options.tls.certFile],
          ...["--tls-key-file", options.tls.keyFile, "--tls-auth-clients", "no"]
        ])
  ]

  let child: ChildProcess | undefined
  // If the test process dies first, the server must not outlive it.
  const killOnExit = () => child?.kill("SIGKILL")
  process.once("exit", killOnExit)

  const launch = async (port: number) => {
    rmSync(join(dir, "nodes.conf"), { force: true })
    const started = spawn("redis-server", args(port), { stdio: ["ignore", "pipe", "pipe"] })
    child = started
    let output = ""
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start within 10 s:\n${output}`)), 10_000)
      const read = (chunk: Buffer) => {
        output += chunk.toString()
        if (output.includes("Ready to accept connections")) {
          clearTimeout(timer)
          resolve()
        }
      }
      started.stdout?.on("data", read)
      started.stderr?.on("data", read)
      started.once("exit", (code) => {
        clearTimeout(timer)
        reject(new Error(`redis-server exited with ${code} at start:\n${output}`))
      })
    })
    if (!(await ask(port, ["PING"])).startsWith("+PONG")) throw new Error("redis-server does not answer PING")
    if (options.cluster === true) await claimEverySlot(port)
  }

  const stop = async () => {
    const running = child
    if (running === undefined) return
    running.kill("SIGCONT")
    running.kill("SIGTERM")
    await exited(running)
    process.off("exit", killOnExit)
    rmSync(dir, { recursive: true, force: true })
  }

  // Another process may take the free port before redis-server binds it: then try another one.
  let port = 0
  for (let attempt = 1; port === 0; attempt++) {
    const candidate = await freePort()
    try {
      await launch(candidate)
      port = candidate
    } catch (error) {
      if (attempt < 3 && String(error).includes("Address already in use")) continue
      await stop()
      throw error
    }
  }

  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    tlsPort,
    crash: async () => {
      if (child === undefined) return
      child.kill("SIGKILL")
      await exited(child)
    },
    freeze: () => child?.kill("SIGSTOP"),
    thaw: () => child?.kill("SIGCONT"),
    restart: () => launch(port),
    stop
  }
}

// A fresh cluster node owns no slot; give it all 16384 and wait until it says the cluster is ok.
const claimEverySlot = async (port: number) => {
  const added = await ask(port, ["CLUSTER ADDSLOTSRANGE 0 16383"])
  if (!added.startsWith("+OK")) throw new Error(`CLUSTER ADDSLOTSRANGE failed: ${added}`)
  const until = Date.now() + 10_000
  while (!(await ask(port, ["CLUSTER INFO"])).includes("cluster_state:ok")) {
    if (Date.now() > until) throw new Error("the one-node cluster did not become ok within 10 s")
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
