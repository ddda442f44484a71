// walletgate's own work per request, counted in instructions: repeatable where time is not.
//
// bench/http.ts measures time and CPU time over loopback, which a shared 2-core machine moves by 10-25 % between
// identical runs. This counts the instructions the CPU executes instead (valgrind's callgrind, which runs the
// program on a synthetic CPU). Each request is answered in process (bench/instructions/worker.ts) by
// `gateway.handle` and by the bare logic the HTTP benchmark's bare servers run (bench/http/bare.ts, with its
// in-memory state), so the difference is walletgate's own cost, frameworks and sockets left out. Node runs with
// --single-threaded (no concurrent GC or compiler threads, whose timing moved the count by ~10 %) and fixed hash and
// random seeds (a random hash seed moved it by up to 15 % for the cheapest request). After a warm-up, requests are
// counted in windows until a few in a row agree (`steadyCount`): V8 compiles a request's path in waves for
// thousands of requests, and a window holding one cost several times a steady one (the difference of two long runs,
// used before, moved by up to 40 % between runs for the cheap requests).
// The same comparison is then made over HTTP, server by server (bench/instructions/http.ts): each walletgate server
// of bench/http and the bare app it is judged against (with the sign-in's state work) answer the same requests
// over loopback, and the server's own instructions per request are counted: the repeatable form of bench/http's
// goal, walletgate under 10 % over the bare framework (the kernel's share left out, as bench/http leaves out system
// time, and no load generator on the same cores). Last, each pair is timed the same way at full speed, its two
// servers in turns block by block (`pairedCpu`): user CPU time is the goal's verdict, the count its repeatable check.
// Needs valgrind on PATH (Debian: apt-get install valgrind); says so and measures nothing without it.
import { spawn, spawnSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { availableParallelism } from "node:os"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { type MeasuredRequest, measuredRequests, type Reference } from "./http/requests.ts"
import { table } from "./http/table.ts"
import { pairs, type TargetName } from "./http/targets.ts"
import { referenceAnswers } from "./http/throughput.ts"
import {
  type CountSettings,
  countedNode,
  type HttpTimeSettings,
  pairedCpu,
  serverInstructions,
  steadyCount
} from "./instructions/http.ts"
import { type InstructionRequest, type InstructionServer, instructionRequests } from "./instructions/worker.ts"

// In process: a warm-up of the request, then its windows until three agree (as over HTTP).
const IN_PROCESS: CountSettings = {
  warmUp: 10_000,
  count: 1_000,
  steadyWindows: 3,
  steadySpread: 0.05,
  maxWindows: 15
}
// Over HTTP (bench/instructions/http.ts): a warm-up of every request, then each request's windows until three agree.
const OVER_HTTP: CountSettings = {
  warmUp: 5_000,
  count: 1_000,
  steadyWindows: 3,
  steadySpread: 0.05,
  maxWindows: 15
}
// The same protocol timed at full speed, walletgate's server and the bare app's in turns, block by block.
const TIMED: HttpTimeSettings = { warmUp: 5_000, block: 500, rounds: 200 }
const GOAL = 0.1
// The pairs of bench/http the goal is judged on, and their servers (walletgate's and the bare app with state).
const judged = pairs.filter((pair) => pair.judged)
const judgedTargets = judged.flatMap((pair) => [pair.walletgate, pair.bareWithState])
const worker = fileURLToPath(new URL("./instructions/worker.ts", import.meta.url))

/**
 * Instructions per request of `request` answered in process by `server` (bench/instructions/worker.ts under
 * callgrind): after a warm-up, windows until they agree, the counter read between them from outside.
 */
const countInProcess = async (server: InstructionServer, request: InstructionRequest, reference: string) => {
  const phones = IN_PROCESS.warmUp + IN_PROCESS.count * IN_PROCESS.maxWindows + 1
  const child = spawn("valgrind", countedNode([worker, server, request, reference]), {
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, TEST_PHONES: String(phones) }
  })
  let output = ""
  child.stderr.on("data", (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8000)
  })
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve))
  // The worker's lines (`ready`, then a `done` per window), read one at a time.
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const nextLine = async () => {
    if ((await lines.next()).done === true) {
      throw new Error(`${server}, ${request}: the worker exited with ${await exited}\n${output}`)
    }
  }
  const answer = async (count: number) => {
    child.stdin.write(`${count}\n`)
    await nextLine()
  }
  try {
    await nextLine()
    const { pid } = child
    if (pid === undefined) throw new Error(`${server}, ${request}: valgrind did not start`)
    await answer(IN_PROCESS.warmUp)
    return await steadyCount(pid, IN_PROCESS, () => answer(IN_PROCESS.count))
  } finally {
    child.stdin.end()
    await exited
  }
}

/** Runs `jobs` at most `limit` at a time. */
const inTurns = async <A>(jobs: ReadonlyArray<() => Promise<A>>, limit: number): Promise<Array<A>> => {
  const results: Array<A> = []
  let next = 0
  const lane = async () => {
    while (next < jobs.length) {
      const index = next++
      const job = jobs[index]
      if (job !== undefined) results[index] = await job()
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, limit) }, lane))
  return results
}

/** Counts, prints the table and writes `bench/results/instructions.json`. */
export async function run(): Promise<void> {
  const results = new URL("./results/", import.meta.url)
  mkdirSync(results, { recursive: true })
  if (spawnSync("valgrind", ["--version"]).status !== 0) {
    console.log("Not measured: valgrind is not installed (Debian: apt-get install valgrind).")
    writeFileSync(new URL("instructions.json", results), `${JSON.stringify({ notMeasured: "valgrind" }, null, 2)}\n`)
    return
  }
  const answers = await referenceAnswers()
  const reference = JSON.stringify(answers)
  const requests = Object.keys(instructionRequests) as Array<InstructionRequest>
  const servers: ReadonlyArray<InstructionServer> = ["walletgate", "bare + state"]
  const cases = requests.flatMap((request) => servers.map((server) => ({ request, server })))
  const counted = await inTurns(
    cases.map(({ request, server }) => () => {
      console.error(`  … ${server}, ${request}, in process under valgrind`)
      return countInProcess(server, request, reference)
    }),
    availableParallelism()
  )
  const countOf = (request: InstructionRequest, server: InstructionServer) =>
    counted[cases.findIndex((each) => each.request === request && each.server === server)]
  const rows = requests.map((request) => {
    const ours = countOf(request, "walletgate")
    const theirs = countOf(request, "bare + state")
    const walletgate = ours?.perRequest ?? Number.NaN
    const bare = theirs?.perRequest ?? Number.NaN
    return {
      request,
      walletgate,
      bare,
      extra: walletgate - bare,
      ratio: Number((walletgate / bare).toFixed(2)),
      steady: { walletgate: ours?.steady ?? false, bare: theirs?.steady ?? false },
      windows: { walletgate: ours?.windows ?? [], bare: theirs?.windows ?? [] }
    }
  })

  console.log(
    `### Instructions per request, in process (valgrind callgrind, node --single-threaded; after ` +
      `${IN_PROCESS.warmUp} requests, the median of the first ${IN_PROCESS.steadyWindows} consecutive windows of ` +
      `${IN_PROCESS.count} within ${IN_PROCESS.steadySpread * 100} % of each other)\n`
  )
  console.log(
    table(
      ["request", "gateway.handle", "bare + state", "walletgate's own", "×"],
      rows.map((row) => [
        row.request,
        `${row.walletgate.toLocaleString("en")}${row.steady.walletgate ? "" : " *"}`,
        `${row.bare.toLocaleString("en")}${row.steady.bare ? "" : " *"}`,
        row.extra.toLocaleString("en"),
        row.ratio.toFixed(2)
      ]),
      1
    )
  )

  const overHttp = await countOverHttp(answers)
  console.log(
    `\n### Instructions per request in the server, over HTTP (user mode; after ${OVER_HTTP.warmUp} of each request, ` +
      `the median of the first ${OVER_HTTP.steadyWindows} consecutive windows of ${OVER_HTTP.count} within ` +
      `${OVER_HTTP.steadySpread * 100} % of each other; goal: walletgate's own under ${GOAL * 100} %)\n`
  )
  console.log(
    table(
      ["framework", "request", "walletgate", "bare + state", "walletgate's own", "×", "goal"],
      overHttp.map((row) => [
        row.framework,
        row.request,
        `${row.walletgate.toLocaleString("en")}${row.steady.walletgate ? "" : " *"}`,
        `${row.bare.toLocaleString("en")}${row.steady.bare ? "" : " *"}`,
        row.extra.toLocaleString("en"),
        row.ratio.toFixed(2),
        row.goalMet ? "met" : "not met"
      ]),
      2
    )
  )
  const missed = overHttp.filter((row) => !row.goalMet).length
  console.log(`\nGoal met on ${overHttp.length - missed} of ${overHttp.length} rows.`)
  if (overHttp.some((row) => !row.steady.walletgate || !row.steady.bare)) {
    console.log(
      `* not steady within ${OVER_HTTP.maxWindows} windows: the median of its least spread ` +
        `${OVER_HTTP.steadyWindows} consecutive windows (all of them in instructions.json)`
    )
  }

  const timed = await timeOverHttp(answers)
  console.log(
    `\n### The same protocol timed: the server's user CPU µs per request at full speed (same node flags, ` +
      `${TIMED.warmUp} of each request, then ${TIMED.rounds} rounds of a block of ${TIMED.block} on each server of a ` +
      `pair in turns; × user CPU over all blocks with its 95 % interval; × user + system: the median of the rounds)\n`
  )
  console.log(
    table(
      [
        "framework",
        "request",
        "walletgate µs",
        "bare + state µs",
        "× user CPU (95 %)",
        "× user + system",
        "× instructions",
        "goal"
      ],
      timed.map((row) => {
        const counted = overHttp.find((each) => each.framework === row.framework && each.request === row.request)
        return [
          row.framework,
          row.request,
          row.walletgate.toFixed(1),
          row.bare.toFixed(1),
          `${row.userRatio.toFixed(2)} (${row.userRatioLow.toFixed(2)}–${row.userRatioHigh.toFixed(2)})`,
          row.totalRatio.toFixed(2),
          counted === undefined ? "" : counted.ratio.toFixed(2),
          row.userRatio - 1 < GOAL ? "met" : "not met"
        ]
      }),
      2
    )
  )
  const slower = timed.filter((row) => row.userRatio - 1 >= GOAL).length
  console.log(`\nBy user CPU, goal met on ${timed.length - slower} of ${timed.length} rows.`)
  writeFileSync(
    new URL("instructions.json", results),
    `${JSON.stringify(
      {
        measuredAt: new Date().toISOString(),
        node: process.version,
        inProcess: { settings: IN_PROCESS, rows },
        overHttp: { settings: OVER_HTTP, goal: GOAL, rows: overHttp },
        timedOverHttp: { settings: TIMED, rows: timed }
      },
      null,
      2
    )}\n`
  )
}

/**
 * Counts every judged pair of bench/http over HTTP. Every server answers the three requests in the same order
 * with the same warm-ups, so that each count comes from a server in the same state; the bare side is the bare app
 * with the sign-in's state work, whose unknown path and JWKS are the plain bare app's.
 */
const countOverHttp = async (reference: Reference) => {
  const counted = await inTurns(
    judgedTargets.map((target) => async () => {
      console.error(`  … ${target} over HTTP under valgrind`)
      return { target, counts: await serverInstructions(target, measuredRequests, OVER_HTTP, reference) }
    }),
    availableParallelism()
  )
  const countOf = (target: TargetName, request: MeasuredRequest) =>
    counted.find((each) => each.target === target)?.counts.get(request.name)
  return judged.flatMap((pair) =>
    measuredRequests.map((request) => {
      const ours = countOf(pair.walletgate, request)
      const theirs = countOf(pair.bareWithState, request)
      const walletgate = ours?.perRequest ?? Number.NaN
      const bare = theirs?.perRequest ?? Number.NaN
      return {
        framework: pair.framework,
        request: request.name,
        walletgate,
        bare,
        extra: walletgate - bare,
        ratio: Number((walletgate / bare).toFixed(2)),
        goalMet: walletgate / bare - 1 < GOAL,
        steady: { walletgate: ours?.steady ?? false, bare: theirs?.steady ?? false },
        windows: { walletgate: ours?.windows ?? [], bare: theirs?.windows ?? [] }
      }
    })
  )
}

/** Times every judged pair of bench/http in turns (bench/instructions/http.ts), one pair at a time. */
const timeOverHttp = async (reference: Reference) => {
  const rows = []
  for (const pair of judged) {
    console.error(`  … ${pair.walletgate} and ${pair.bareWithState} over HTTP, timed in turns`)
    const timed = await pairedCpu(
      { walletgate: pair.walletgate, bare: pair.bareWithState },
      measuredRequests,
      TIMED,
      reference
    )
    for (const request of measuredRequests) {
      const row = timed.get(request.name)
      if (row !== undefined) rows.push({ framework: pair.framework, request: request.name, ...row })
    }
  }
  return rows
}
