// The instructions one of bench/http's servers executes per request over loopback, in user mode. The server
// (bench/http/serve.ts) runs under valgrind's callgrind; the client runs here, outside it, so that only the
// server's own work is counted: its framework, walletgate or the bare logic, Node's HTTP parser, libuv, the
// garbage collector, but neither the kernel's socket work (valgrind cannot see it) nor the load generator's.
// Once the server is warm, for each request the client reads its counter (`callgrind_control -e Ir`, which
// leaves the count alone), sends a window of requests and reads the counter again, window after window until a
// few in a row agree: start-up and V8's compiling of the request path are left out, in one process. Requests go
// one after the other on one keep-alive connection, the same for the server's whole life, so that the server reads
// each on its own and the count does not depend on how requests happened to batch.
import { spawn } from "node:child_process"
import { Agent, request as httpRequest } from "node:http"
import type { MeasuredRequest, Reference } from "../http/requests.ts"
import { median } from "../http/statistics.ts"
import type { TargetName } from "../http/targets.ts"
import { type Child, type Launch, startChild } from "../http/throughput.ts"

/** The node flags every counted process runs with (see the top of bench/instructions.ts), and the timed ones too. */
const COUNTED_NODE_FLAGS = ["--single-threaded", "--hash-seed=1", "--random-seed=1"]

/**
 * valgrind's arguments to count what node executes on `nodeArguments` (a script and its own arguments), with the
 * node flags every counted process runs with.
 */
export const countedNode = (nodeArguments: ReadonlyArray<string>): Array<string> => [
  "--tool=callgrind",
  "--callgrind-out-file=/dev/null",
  process.execPath,
  ...COUNTED_NODE_FLAGS,
  ...nodeArguments
]

/** How many requests warm a process up, and when a request's count is steady (in process and over HTTP alike). */
export interface CountSettings {
  /** Requests of each kind a server answers before any is counted. */
  readonly warmUp: number
  /** Requests per counted window. */
  readonly count: number
  /**
   * Consecutive windows that must agree for a count to be taken: V8 keeps compiling the request path with
   * TurboFan well after the warm-up (a window holding such a wave cost 3-4 times a steady one).
   */
  readonly steadyWindows: number
  /** How far those windows may spread: the largest over the smallest, less one. */
  readonly steadySpread: number
  /** Windows counted at most; a request that is not steady by then keeps its least spread run, marked so. */
  readonly maxWindows: number
}

/** What a request cost a process: the median of its steady windows, and every window counted. */
export interface WindowedCount {
  readonly perRequest: number
  readonly windows: ReadonlyArray<number>
  /** Whether `steadyWindows` consecutive windows agreed within `steadySpread`. */
  readonly steady: boolean
}

/** The spread of `windows`: the largest over the smallest, less one. */
const spreadOf = (windows: ReadonlyArray<number>) => Math.max(...windows) / Math.min(...windows) - 1

/** The run of `length` consecutive windows that spreads least (the last of equals). */
const leastSpreadRun = (windows: ReadonlyArray<number>, length: number): ReadonlyArray<number> => {
  let best = windows.slice(-length)
  for (let start = 0; start + length <= windows.length; start++) {
    const run = windows.slice(start, start + length)
    if (spreadOf(run) < spreadOf(best)) best = run
  }
  return best
}

/**
 * Sends `request` `count` times, one at a time on one connection, bodies numbered by `next`; rejects on any other
 * status than the expected one (a count of errors would measure something else).
 */
const sendAll = async (agent: Agent, origin: string, request: MeasuredRequest, count: number, next: () => number) => {
  for (let n = 0; n < count; n++) {
    const body = request.body?.(next())
    const status = await new Promise<number>((resolve, reject) => {
      const sent = httpRequest(
        `${origin}${request.path}`,
        {
          agent,
          method: request.method,
          headers:
            body === undefined
              ? {}
              : { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }
        },
        (response) => {
          response.resume()
          response.once("end", () => resolve(response.statusCode ?? 0))
          response.once("error", reject)
        }
      )
      sent.once("error", reject)
      sent.end(body)
    })
    if (status !== request.status) throw new Error(`${request.name}: expected ${request.status}, got ${status}`)
  }
}

/** A server started for counting or timing, warmed up, and the way to send it more of a request. */
interface WarmServer {
  readonly server: Child
  /** Sends `request` `count` times on the server's one connection. */
  readonly send: (request: MeasuredRequest, count: number) => Promise<void>
}

/**
 * Starts `target` with `launch` (with enough test phones for `warmUp` and then `later` requests of each kind),
 * answers `warmUp` of every one of `requests` on one keep-alive connection, hands it to `use`, and stops it. One
 * connection for the server's whole life: a new one made V8 throw away code it had compiled for the last one's
 * sockets and streams ("wrong map" deoptimisations) and compile it again inside a window. Every request is warmed
 * up before any is measured, so that whichever is measured first is no less warm than the others (measured first
 * after a warm-up of its own, the unknown path still cost 2-8 times its later count).
 */
const withWarmServer = async <A>(
  target: TargetName,
  requests: ReadonlyArray<MeasuredRequest>,
  reference: Reference,
  counts: { readonly warmUp: number; readonly later: number },
  launch: Omit<Launch, "env">,
  use: (warm: WarmServer) => Promise<A>
): Promise<A> => {
  const phones = requests.filter((request) => request.body !== undefined).length * (counts.warmUp + counts.later)
  const server = await startChild(target, reference, {
    ...launch,
    env: { ...process.env, TEST_PHONES: String(phones + 1) }
  })
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  try {
    let sent = 0
    const next = () => sent++
    const send = (request: MeasuredRequest, count: number) => sendAll(agent, server.origin, request, count, next)
    for (const request of requests) await send(request, counts.warmUp)
    return await use({ server, send })
  } finally {
    agent.destroy()
    await server.stop()
  }
}

/** The instructions a process under callgrind has executed so far, all its threads together. */
const executedBy = (pid: number) =>
  new Promise<number>((resolve, reject) => {
    const control = spawn("callgrind_control", ["-e", "Ir", String(pid)], { stdio: ["ignore", "pipe", "ignore"] })
    let printed = ""
    control.stdout.on("data", (chunk: Buffer) => {
      printed += chunk.toString()
    })
    control.once("error", reject)
    control.once("exit", () => {
      const threads = [...printed.matchAll(/^\s*Th\s+\d+\s+([\d,]+)\s*$/gm)].map((match) =>
        Number((match[1] ?? "").replaceAll(",", ""))
      )
      if (threads.length > 0) resolve(threads.reduce((sum, each) => sum + each, 0))
      else reject(new Error(`callgrind_control printed no counts for ${pid}:\n${printed}`))
    })
  })

/**
 * Counts what process `pid` (under callgrind) executes per request in windows of `settings.count` requests, each
 * sent by `sendWindow`, until `settings.steadyWindows` windows in a row agree within `settings.steadySpread`: V8 keeps
 * compiling a request's path in waves well after a warm-up, and a window holding one costs several times a steady
 * one. The counter is read between windows (`callgrind_control -e Ir`, which leaves it alone).
 */
export const steadyCount = async (
  pid: number,
  settings: CountSettings,
  sendWindow: () => Promise<void>
): Promise<WindowedCount> => {
  const windows: Array<number> = []
  let steady = false
  while (!steady && windows.length < settings.maxWindows) {
    const before = await executedBy(pid)
    await sendWindow()
    windows.push(Math.round(((await executedBy(pid)) - before) / settings.count))
    steady =
      windows.length >= settings.steadyWindows &&
      spreadOf(windows.slice(-settings.steadyWindows)) <= settings.steadySpread
  }
  return { perRequest: median(leastSpreadRun(windows, settings.steadyWindows)), windows, steady }
}

/**
 * Instructions per request of server `target` for each of `requests`, over HTTP: one process under callgrind
 * answers them all on one keep-alive connection, warmed up on every one of them first.
 */
export const serverInstructions = async (
  target: TargetName,
  requests: ReadonlyArray<MeasuredRequest>,
  settings: CountSettings,
  reference: Reference
): Promise<ReadonlyMap<string, WindowedCount>> =>
  withWarmServer(
    target,
    requests,
    reference,
    { warmUp: settings.warmUp, later: settings.count * settings.maxWindows },
    // Start-up under valgrind takes about a minute and a half on the 2-core machine (node compiles the bench's
    // TypeScript and loads every framework on a synthetic CPU).
    { command: (serveArguments) => ["valgrind", countedNode(serveArguments)], startSeconds: 600 },
    async ({ server, send }) => {
      const { pid } = server
      if (pid === undefined) throw new Error(`${target}: valgrind did not start`)
      const counts = new Map<string, WindowedCount>()
      for (const request of requests) {
        counts.set(request.name, await steadyCount(pid, settings, () => send(request, settings.count)))
      }
      return counts
    }
  )

/** How a pair of servers is timed at full speed, in turns (see {@link pairedCpu}). */
export interface HttpTimeSettings {
  /** Requests of each kind each server answers before any is timed. */
  readonly warmUp: number
  /** Requests per timed block. */
  readonly block: number
  /** Rounds per request: each round times one block on each server, the order alternating. */
  readonly rounds: number
}

/** One round of a request on a pair of servers: CPU µs per request of each side's block. */
interface Round {
  readonly walletgate: { readonly user: number; readonly total: number }
  readonly bare: { readonly user: number; readonly total: number }
}

/** A request timed on a pair of servers, in turns. */
export interface PairedTime {
  /** User CPU µs per request over all blocks, walletgate's and the bare app's. */
  readonly walletgate: number
  readonly bare: number
  /** walletgate's user CPU over the bare app's, all blocks together, with a 95 % interval (bootstrap over rounds). */
  readonly userRatio: number
  readonly userRatioLow: number
  readonly userRatioHigh: number
  /** The median of the rounds' ratios of user + system time (each exact; the kernel's share included). */
  readonly totalRatio: number
  readonly rounds: ReadonlyArray<Round>
}

/** walletgate's user CPU over the bare app's, summed over `rounds`. */
const userRatioOf = (rounds: ReadonlyArray<Round>) =>
  rounds.reduce((sum, round) => sum + round.walletgate.user, 0) /
  rounds.reduce((sum, round) => sum + round.bare.user, 0)

/**
 * The 95 % interval of {@link userRatioOf} by the percentile bootstrap: 2,000 resamplings of the rounds, drawn with a
 * fixed-seed generator (a linear congruential one) so that the same rounds always give the same interval.
 */
const bootstrapInterval = (rounds: ReadonlyArray<Round>): readonly [number, number] => {
  let seed = 1
  const nextIndex = () => {
    seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0
    // The high bits: a power-of-two modulus leaves the low bits of such a generator short cycles.
    return Math.floor((seed / 2 ** 32) * rounds.length)
  }
  const resample = () =>
    Array.from(rounds, () => rounds[nextIndex()]).filter((round): round is Round => round !== undefined)
  const ratios = Array.from({ length: 2_000 }, () => userRatioOf(resample())).sort((a, b) => a - b)
  return [ratios[49] ?? Number.NaN, ratios[1_949] ?? Number.NaN]
}

/**
 * The CPU time walletgate's server and the bare app's spend per request, driven as {@link serverInstructions} drives
 * one (same node flags, one keep-alive connection each, one request at a time, every request warmed up) but at full
 * speed and in turns: both servers run at once, and each round times a block on one then a block on the other (the
 * order alternating), so that the machine's slow and fast moments, which move a server's CPU time per request by up
 * to 2 times between minutes on the 2-core machine, fall on both sides alike. Each server reads its own CPU time
 * (getrusage, to the µs). The figure is user time, as in bench/http.ts (a server's system time also carries the
 * client's wake-up); the kernel splits user from system time by sampling at its clock tick, too coarse for one 40 ms
 * block but even over all of them, so user time is taken over all blocks, and its interval from resampling the
 * rounds. The exact user + system time gives each round a ratio of its own; their median is reported beside it.
 */
export const pairedCpu = async (
  pair: { readonly walletgate: TargetName; readonly bare: TargetName },
  requests: ReadonlyArray<MeasuredRequest>,
  settings: HttpTimeSettings,
  reference: Reference
): Promise<ReadonlyMap<string, PairedTime>> => {
  const counts = { warmUp: settings.warmUp, later: settings.block * settings.rounds }
  const launch: Omit<Launch, "env"> = {
    command: (serveArguments) => [process.execPath, [...COUNTED_NODE_FLAGS, ...serveArguments]],
    startSeconds: 60
  }
  return withWarmServer(pair.walletgate, requests, reference, counts, launch, (ours) =>
    withWarmServer(pair.bare, requests, reference, counts, launch, async (theirs) => {
      /** CPU µs per request of one block on `side`: user alone, and user + system. */
      const timeBlock = async (side: WarmServer, request: MeasuredRequest) => {
        const before = await side.server.cpuTime()
        await side.send(request, settings.block)
        const after = await side.server.cpuTime()
        return {
          user: (after.user - before.user) / settings.block,
          total: (after.user + after.system - before.user - before.system) / settings.block
        }
      }
      const timed = new Map<string, PairedTime>()
      for (const request of requests) {
        const rounds: Array<Round> = []
        for (let round = 0; round < settings.rounds; round++) {
          if (round % 2 === 0) {
            const walletgate = await timeBlock(ours, request)
            rounds.push({ walletgate, bare: await timeBlock(theirs, request) })
          } else {
            const bare = await timeBlock(theirs, request)
            rounds.push({ walletgate: await timeBlock(ours, request), bare })
          }
        }
        const [userRatioLow, userRatioHigh] = bootstrapInterval(rounds)
        const userPerRequest = (side: "walletgate" | "bare") =>
          rounds.reduce((sum, round) => sum + round[side].user, 0) / rounds.length
        timed.set(request.name, {
          walletgate: userPerRequest("walletgate"),
          bare: userPerRequest("bare"),
          userRatio: userRatioOf(rounds),
          userRatioLow,
          userRatioHigh,
          totalRatio: median(rounds.map((round) => round.walletgate.total / round.bare.total)),
          rounds
        })
      }
      return timed
    })
  )
}
