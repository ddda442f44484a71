// Throughput and latency of the same requests through walletgate and through the bare frameworks. Every
// server runs in a child process of its own (bench/http/serve.ts), started afresh for each run, and autocannon
// drives it from this process over loopback. A run of a server: for each measured request, a warm-up, then
// the measurement. The servers take turns within each run, so that a noisy moment of the machine falls on
// all of them alike; each figure is the median of the runs.
import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { fileURLToPath } from "node:url"
import { embeddedPorts, makeGateway } from "@walletgate/core"
import { type LoadResult, type LoadSettings, load } from "./load.ts"
import {
  JWKS_PATH,
  type MeasuredRequest,
  MISSING_PATH,
  measuredRequests,
  type Reference,
  TEST_PHONES
} from "./requests.ts"
import { median } from "./statistics.ts"
import type { TargetName } from "./targets.ts"

/** How the servers are driven. */
export interface ThroughputSettings extends LoadSettings {
  readonly runs: number
  readonly warmUpSeconds: number
}

/** A server and the requests it is measured with. */
export interface Target {
  readonly name: TargetName
  /** The names of the requests measured on it; all of them when absent. */
  readonly only?: ReadonlyArray<string>
  /** Its answers are not walletgate's by design (the load ceiling): they are not compared with the others'. */
  readonly answersDiffer?: boolean
}

/** The runs of one request on one server, and their medians. */
export interface ThroughputRow {
  readonly target: TargetName
  readonly request: string
  readonly requestsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  /** The server's CPU time per request (user + system, GC threads included), in µs. */
  readonly cpuMicrosecondsPerRequest: number
  /** The user-mode part of it: the server's own code (JS, V8, Node, libuv), the kernel's work left out. */
  readonly userCpuMicrosecondsPerRequest: number
  readonly runs: ReadonlyArray<MeasuredRun>
}

/** One load run, with the CPU time the server spent on it. */
export interface MeasuredRun extends LoadResult {
  readonly cpuMicrosecondsPerRequest: number
  readonly userCpuMicrosecondsPerRequest: number
}

const serveScript = fileURLToPath(new URL("./serve.ts", import.meta.url))

/** The JWKS and 404 documents a walletgate gateway answers, for the bare servers to answer alike. */
export const referenceAnswers = async (): Promise<Reference> => {
  const gateway = makeGateway({ ports: embeddedPorts(), loggers: [] })
  try {
    const read = async (path: string) =>
      (await gateway.fetch(new Request(`http://127.0.0.1${path}`))).json() as Promise<unknown>
    return { jwks: await read(JWKS_PATH), notFound: await read(MISSING_PATH) }
  } finally {
    await gateway.dispose()
  }
}

/** A server in its child process. */
export interface Child {
  readonly origin: string
  /** The child's process id (valgrind's, when it runs under valgrind). */
  readonly pid: number | undefined
  readonly stop: () => Promise<void>
  /** CPU time the child has used so far (all its threads), in µs, as it reads it itself (bench/http/serve.ts). */
  readonly cpuTime: () => Promise<CpuTime>
}

/** A process's CPU time, in µs, as the kernel splits it. */
interface CpuTime {
  /** In user mode: the process's own code. */
  readonly user: number
  /** In the kernel on the process's behalf (its system calls, and the interrupts that land while it runs). */
  readonly system: number
}

/** How a server's process is started: straight on node by default, or under a tool. */
export interface Launch {
  /** The program and its arguments that run node on `serveArguments` (bench/http/serve.ts and its own). */
  readonly command: (serveArguments: ReadonlyArray<string>) => readonly [string, ReadonlyArray<string>]
  readonly env: NodeJS.ProcessEnv
  /** How long the server may take to announce its port. */
  readonly startSeconds: number
}

const onNode: Launch = {
  command: (serveArguments) => [process.execPath, serveArguments],
  env: process.env,
  startSeconds: 30
}

/** Starts server `name` in a child process (bench/http/serve.ts) and resolves once it listens. */
export const startChild = async (name: TargetName, reference: Reference, launch: Launch = onNode): Promise<Child> => {
  const [command, args] = launch.command([serveScript, name, JSON.stringify(reference)])
  const child: ChildProcess = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"], env: launch.env })
  // Kept for an error message; read continuously so that a chatty child never blocks on a full pipe.
  let output = ""
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000)
  }
  child.stderr?.on("data", keep)
  const exited = once(child, "exit")
  // The answers to `cpu` asked on its stdin (bench/http/serve.ts), in the order asked.
  const asked: Array<(time: CpuTime) => void> = []
  let pending = ""
  const answered = (chunk: Buffer) => {
    pending += chunk.toString()
    const lines = pending.split("\n")
    pending = lines.pop() ?? ""
    for (const line of lines) {
      const cpu = /^\{"cpu":\{"user":(\d+),"system":(\d+)\}\}$/.exec(line)
      if (cpu === null) keep(Buffer.from(`${line}\n`))
      else asked.shift()?.({ user: Number(cpu[1]), system: Number(cpu[2]) })
    }
  }
  const cpuTime = () =>
    new Promise<CpuTime>((resolve, reject) => {
      if (child.exitCode !== null || child.signalCode !== null) {
        reject(new Error(`${name} has exited`))
        return
      }
      asked.push(resolve)
      child.stdin?.write("cpu\n")
    })
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill("SIGTERM")
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000)
    await exited
    clearTimeout(timer)
  }
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} did not start within ${launch.startSeconds} s:\n${output}`)),
      launch.startSeconds * 1000
    )
    // The gateway's start-up warnings come first, on stdout too; the port is on a line of its own.
    let lines = ""
    const announce = (chunk: Buffer) => {
      keep(chunk)
      lines += chunk.toString()
      const announced = /^\{"port":(\d+)\}$/m.exec(lines)
      if (announced === null) return
      clearTimeout(timer)
      child.stdout?.off("data", announce)
      child.stdout?.on("data", answered)
      resolve(Number(announced[1]))
    }
    child.stdout?.on("data", announce)
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`${name} exited with ${code} at start:\n${output}`))
    })
  }).catch(async (error: unknown) => {
    await stop()
    throw error
  })
  return { origin: `http://127.0.0.1:${port}`, pid: child.pid, stop, cpuTime }
}

const OFFERED_REQUEST_ID = "bench-check.1"

/**
 * What every server's answer to `request` must have in common: the status, the headers but for the random
 * x-request-id (which must be a UUID, or the client's own when it sent a sane one), and the body (the JWKS: its
 * size, each server having its own key). `next` numbers the bodies (each sign-in goes to a phone not used before).
 */
const shapeOf = async (origin: string, request: MeasuredRequest, next: () => number): Promise<string> => {
  const send = (headers: Record<string, string>) =>
    fetch(`${origin}${request.path}`, {
      method: request.method,
      ...(request.body === undefined
        ? { headers }
        : { headers: { ...headers, "content-type": "application/json" }, body: request.body(next()) })
    })
  const response = await send({})
  const body = await response.text()
  const requestId = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(
    response.headers.get("x-request-id") ?? ""
  )
  const offered = await send({ "x-request-id": OFFERED_REQUEST_ID })
  await offered.arrayBuffer()
  const echoed = offered.headers.get("x-request-id") === OFFERED_REQUEST_ID
  return [
    `status ${response.status}`,
    ...["content-type", "cache-control", "x-content-type-options"].map(
      (name) => `${name}: ${response.headers.get(name)}`
    ),
    `x-request-id: ${requestId ? "a UUID" : "missing"}, ${echoed ? "the client's own echoed" : "the client's own not echoed"}`,
    request.path === JWKS_PATH ? `${Buffer.byteLength(body)} bytes` : body
  ].join("\n")
}

/** Refuses a run whose answers were not all the expected status: its numbers would measure something else. */
const checked = (target: TargetName, request: MeasuredRequest, result: LoadResult): LoadResult => {
  const unexpected = Object.entries(result.statuses).filter(([code]) => Number(code) !== request.status)
  if (unexpected.length > 0 || result.errors > 0 || result.timeouts > 0 || result.responses === 0) {
    throw new Error(
      `${target}, ${request.name}: expected only ${request.status}, got ${JSON.stringify(result.statuses)}, ` +
        `${result.errors} errors, ${result.timeouts} timeouts`
    )
  }
  return result
}

/** Measures every target with its requests; resolves to one row per target and request. */
export const measureThroughput = async (
  targets: ReadonlyArray<Target>,
  settings: ThroughputSettings,
  reference: Reference,
  progress: (line: string) => void
): Promise<ReadonlyArray<ThroughputRow>> => {
  const requestsOf = (target: Target) =>
    measuredRequests.filter((request) => target.only === undefined || target.only.includes(request.name))
  const runs = new Map<string, Array<MeasuredRun>>()
  const shapes = new Map<string, { readonly target: TargetName; readonly shape: string }>()
  const key = (target: TargetName, request: MeasuredRequest) => `${target}\u0000${request.name}`
  for (let run = 1; run <= settings.runs; run++) {
    for (const target of targets) {
      progress(`run ${run}/${settings.runs}: ${target.name}`)
      const child = await startChild(target.name, reference)
      try {
        // Every body of this server's life is another one (each sign-in goes to a phone not used before).
        let sent = 0
        const next = () => sent++
        for (const request of requestsOf(target)) {
          if (target.answersDiffer !== true) {
            const shape = await shapeOf(child.origin, request, next)
            const first = shapes.get(request.name) ?? { target: target.name, shape }
            shapes.set(request.name, first)
            if (shape !== first.shape) {
              throw new Error(
                `${request.name}: ${target.name} answers\n${shape}\nbut ${first.target} answers\n${first.shape}`
              )
            }
          }
          await load(child.origin, request, { ...settings, durationSeconds: settings.warmUpSeconds }, next)
          const cpuBefore = await child.cpuTime()
          const measured = checked(target.name, request, await load(child.origin, request, settings, next))
          const cpuAfter = await child.cpuTime()
          const perRequest = (part: (time: CpuTime) => number) =>
            (part(cpuAfter) - part(cpuBefore)) / measured.responses
          const result: MeasuredRun = {
            ...measured,
            cpuMicrosecondsPerRequest: perRequest((time) => time.user + time.system),
            userCpuMicrosecondsPerRequest: perRequest((time) => time.user)
          }
          runs.set(key(target.name, request), [...(runs.get(key(target.name, request)) ?? []), result])
        }
        // Past the last test phone a sign-in would be a real one (other work): no run may get there.
        if (sent > TEST_PHONES) throw new Error(`${target.name} used ${sent} phones: raise TEST_PHONES`)
      } finally {
        await child.stop()
      }
    }
  }
  return targets.flatMap((target) =>
    requestsOf(target).map((request) => {
      const results = runs.get(key(target.name, request)) ?? []
      return {
        target: target.name,
        request: request.name,
        requestsPerSecond: median(results.map((result) => result.requestsPerSecond)),
        p50Ms: median(results.map((result) => result.p50Ms)),
        p99Ms: median(results.map((result) => result.p99Ms)),
        cpuMicrosecondsPerRequest: median(results.map((result) => result.cpuMicrosecondsPerRequest)),
        userCpuMicrosecondsPerRequest: median(results.map((result) => result.userCpuMicrosecondsPerRequest)),
        runs: results
      }
    })
  )
}
