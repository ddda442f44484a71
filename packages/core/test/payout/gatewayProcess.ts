// Starts ./crashChild.ts, a gateway process of the built packages on Redis, for the crash and fleet tests.
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const child = fileURLToPath(new URL("./crashChild.ts", import.meta.url))

/** A running gateway process: its base URL on 127.0.0.1, and the process (the crash test kills it). */
export interface GatewayProcess {
  readonly base: string
  readonly process: ChildProcess
  /** Everything it wrote on stdout and stderr so far. */
  readonly output: () => string
}

/**
 * Starts a gateway process with `env` (REDIS_URL, REDIS_PREFIX, PAYOUT_MASTER_SECRET, PAYOUT_NETWORKS and, for a
 * fleet, GATEWAY_SIGNING_KEY) and resolves once it listens; `started` gets the process at once, to be killed.
 */
export const startGatewayProcess = (env: Record<string, string>, started: Array<ChildProcess>) =>
  new Promise<GatewayProcess>((resolve, reject) => {
    const spawned = spawn(process.execPath, [child], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    started.push(spawned)
    let output = ""
    spawned.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString()
      const port = /listening (\d+)/.exec(output)?.[1]
      if (port !== undefined) resolve({ base: `http://127.0.0.1:${port}`, process: spawned, output: () => output })
    })
    spawned.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString()
    })
    spawned.once("exit", (code) => reject(new Error(`the gateway process exited (${code}): ${output}`)))
  })
