// walletgate over HTTP against the bare frameworks, and single endpoints on memory and Redis.
//
// 1. Throughput and latency (autocannon, loopback): the same requests through the Express adapter and a bare
//    Express 5 app, the Koa adapter and a bare Koa 3 app, `gateway.fetch` behind a minimal node:http bridge
//    and a bare node:http handler. What "the same work" means for the bare apps is written at the top of
//    bench/http/bare.ts; the servers are in bench/http/targets.ts, the method in bench/http/throughput.ts.
//    Each pair's ratios are printed: req/s, p50 and p99, and the server's CPU time per request (which the server
//    reads itself, bench/http/serve.ts), user + system and user alone. User time is what walletgate's code costs:
//    both sides make the same system calls per request (one read, one writev: strace -c), but over loopback a
//    server's writev also runs the client's TCP receive path and wakes the load generator, in the server's own
//    system time, a share that follows the closed loop rather than the server's code. The goal, walletgate under
//    10 % over the bare framework, is not judged here: with autocannon on the same two cores a row's user CPU cost
//    moved by 45 points between runs (Koa's 404: +4 %, then +49 %). Its verdict is bench/instructions.ts, which times
//    each pair in turns.
// 2. Per-endpoint latency (bench/http/endpoints.ts), in memory and on Redis: OTP send + verify, a kernel
//    transaction and a payout on a local anvil, and the RPC round trips of the last two. (The sweeper's lookup
//    with 100 tokens and its round trips: bench/sweeper.ts.)
// Prints the tables and writes bench/results/http.json. Everything it starts (servers, anvil, redis-server)
// it stops; every loop is bounded; it listens on 127.0.0.1 only.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { availableParallelism, loadavg } from "node:os"
import { measureEndpoints } from "./http/endpoints.ts"
import { measuredRequests } from "./http/requests.ts"
import { median } from "./http/statistics.ts"
import { table } from "./http/table.ts"
import { pairs, type TargetName } from "./http/targets.ts"
import {
  type MeasuredRun,
  measureThroughput,
  referenceAnswers,
  type Target,
  type ThroughputRow
} from "./http/throughput.ts"

// Five short runs rather than three long ones: on a shared machine a median of more runs is steadier.
const THROUGHPUT = { runs: 5, durationSeconds: 2, warmUpSeconds: 1, connections: 10 } as const
const ENDPOINTS = { count: 200, warmUp: 20, accounts: 10, counted: 5 } as const
const SIGN_IN = measuredRequests.find((request) => request.method === "POST")?.name ?? ""

const targets: ReadonlyArray<Target> = [
  ...pairs.flatMap(
    (pair): Array<Target> => [
      { name: pair.walletgate },
      { name: pair.bare },
      { name: pair.bareWithState, only: [SIGN_IN] }
    ]
  ),
  { name: "load ceiling (node:http, constant answer)", answersDiffer: true } satisfies Target
].filter((target, index, all) => all.findIndex((other) => other.name === target.name) === index)

const round = (value: number, digits = 0) => Number(value.toFixed(digits))
const percent = (value: number) => `${value >= 0 ? "+" : ""}${(value * 100).toFixed(0)} %`

/** The machine, as the README quotes it. */
const machine = () => {
  const cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1]?.trim() ?? "unknown"
  return { cpu, cores: availableParallelism(), node: process.version, platform: `${process.platform} ${process.arch}` }
}

/** One comparison of a pair on one request. */
const comparison = (rows: ReadonlyArray<ThroughputRow>, walletgate: TargetName, bare: TargetName, request: string) => {
  const ours = rows.find((row) => row.target === walletgate && row.request === request)
  const theirs = rows.find((row) => row.target === bare && row.request === request)
  if (ours === undefined || theirs === undefined) return undefined
  // The cost per request over the bare app (how much longer each request takes at full load), run by run: the
  // two servers of a pair run one after the other within a run, so a slow spell of the machine falls on both.
  const paired = (measure: (ourRate: number, theirRate: number) => number) =>
    median(ours.runs.map((run, i) => measure(run.requestsPerSecond, theirs.runs[i]?.requestsPerSecond ?? Number.NaN)))
  const cost = paired((ourRate, theirRate) => theirRate / ourRate - 1)
  // The same in absolute terms: time walletgate adds to each request, when the server is the bottleneck.
  const extraMicroseconds = paired((ourRate, theirRate) => 1e6 / ourRate - 1e6 / theirRate)
  // The server's own CPU time per request, read from the kernel, run by run: the load generator's share of the
  // two cores and the machine's other work move it far less than they move req/s.
  const cpuCostOf = (figure: (run: MeasuredRun) => number) =>
    median(
      ours.runs.map((run, i) => figure(run) / (theirs.runs[i] === undefined ? Number.NaN : figure(theirs.runs[i])) - 1)
    )
  const cpuCost = cpuCostOf((run) => run.cpuMicrosecondsPerRequest)
  const userCpuCost = cpuCostOf((run) => run.userCpuMicrosecondsPerRequest)
  return {
    request,
    walletgate,
    bare,
    walletgateRequestsPerSecond: round(ours.requestsPerSecond),
    bareRequestsPerSecond: round(theirs.requestsPerSecond),
    cost: round(cost, 3),
    extraMicroseconds: round(extraMicroseconds),
    walletgateCpuMicroseconds: round(ours.cpuMicrosecondsPerRequest),
    bareCpuMicroseconds: round(theirs.cpuMicrosecondsPerRequest),
    cpuCost: round(cpuCost, 3),
    walletgateUserCpuMicroseconds: round(ours.userCpuMicrosecondsPerRequest, 1),
    bareUserCpuMicroseconds: round(theirs.userCpuMicrosecondsPerRequest, 1),
    userCpuCost: round(userCpuCost, 3),
    p50Ratio: round(ours.p50Ms / theirs.p50Ms, 2),
    p99Ratio: round(ours.p99Ms / theirs.p99Ms, 2)
  }
}

/** Measures, prints the tables and writes `bench/results/http.json`. */
export async function run(): Promise<void> {
  const progress = (line: string) => console.error(`  … ${line}`)
  const loadBefore = loadavg()
  const reference = await referenceAnswers()
  const rows = await measureThroughput(targets, THROUGHPUT, reference, progress)
  const loadAfterThroughput = loadavg()

  console.log(
    `### Throughput (autocannon: ${THROUGHPUT.connections} connections, ${THROUGHPUT.durationSeconds} s after ` +
      `${THROUGHPUT.warmUpSeconds} s warm-up, median of ${THROUGHPUT.runs} runs)\n`
  )
  console.log(
    table(
      ["server", "request", "req/s", "p50 ms", "p99 ms", "req/s min–max", "CPU µs/req", "user µs/req"],
      rows.map((row) => [
        row.target,
        row.request,
        String(round(row.requestsPerSecond)),
        row.p50Ms.toFixed(2),
        row.p99Ms.toFixed(2),
        `${round(Math.min(...row.runs.map((run) => run.requestsPerSecond)))}–${round(
          Math.max(...row.runs.map((run) => run.requestsPerSecond))
        )}`,
        row.cpuMicrosecondsPerRequest.toFixed(1),
        row.userCpuMicrosecondsPerRequest.toFixed(1)
      ]),
      2
    )
  )

  // A request is judged against the bare app doing the same work: the sign-in against "+ state" (the plain bare
  // app keeps no code, no counters), the others against the plain one.
  const comparisons = pairs.flatMap((pair) =>
    measuredRequests.flatMap((request) => {
      const plain = comparison(rows, pair.walletgate, pair.bare, request.name)
      const withState = comparison(rows, pair.walletgate, pair.bareWithState, request.name)
      return [
        { each: plain, judged: pair.judged && withState === undefined },
        { each: withState, judged: pair.judged }
      ].flatMap(({ each, judged }) => (each === undefined ? [] : [{ framework: pair.framework, judged, ...each }]))
    })
  )
  console.log("\n### walletgate vs the bare framework\n")
  console.log(
    table(
      [
        "framework",
        "request",
        "compared with",
        "walletgate req/s",
        "bare req/s",
        "cost (req/s)",
        "p50 ×",
        "p99 ×",
        "CPU µs/req",
        "bare",
        "CPU cost",
        "user µs/req",
        "bare",
        "user CPU cost",
        "goal's pair"
      ],
      comparisons.map((each) => [
        each.framework,
        each.request,
        each.bare,
        String(each.walletgateRequestsPerSecond),
        String(each.bareRequestsPerSecond),
        percent(each.cost),
        each.p50Ratio.toFixed(2),
        each.p99Ratio.toFixed(2),
        String(each.walletgateCpuMicroseconds),
        String(each.bareCpuMicroseconds),
        percent(each.cpuCost),
        String(each.walletgateUserCpuMicroseconds),
        String(each.bareUserCpuMicroseconds),
        percent(each.userCpuCost),
        each.judged ? "yes" : "no"
      ]),
      3
    )
  )
  console.log(
    "\nThe goal (walletgate under 10 % over the bare framework) is judged on the rows marked as its pairs, by CPU " +
      "time timed in turns in bench/instructions.ts: under autocannon on the same cores these ratios move too much."
  )

  const endpoints = await measureEndpoints(ENDPOINTS, progress)
  console.log(
    `\n### Endpoints (gateway.fetch in process, ${ENDPOINTS.count} sequential requests after ${ENDPOINTS.warmUp})\n`
  )
  const names = [...new Set(endpoints.rows.map((row) => row.endpoint))]
  const cell = (endpoint: string, store: string, pick: (row: (typeof endpoints.rows)[number]) => number) => {
    const row = endpoints.rows.find((each) => each.endpoint === endpoint && each.store === store)
    return row === undefined ? "n/a" : pick(row).toFixed(2)
  }
  console.log(
    table(
      ["endpoint", "memory p50 ms", "memory p99 ms", "redis p50 ms", "redis p99 ms"],
      names.map((endpoint) => [
        endpoint,
        cell(endpoint, "memory", (row) => row.p50Ms),
        cell(endpoint, "memory", (row) => row.p99Ms),
        cell(endpoint, "redis", (row) => row.p50Ms),
        cell(endpoint, "redis", (row) => row.p99Ms)
      ]),
      1
    )
  )
  if (endpoints.onRedis.length > 0) {
    console.log(
      `\nThe redis columns have ${endpoints.onRedis.join(", ")} on Redis, the other ports in memory; the app, ` +
        `API key and automation accounts stay registered in memory (${endpoints.registeredInMemory.join(", ")}).`
    )
  }
  console.log("\nRPC round trips before the answer (median of the counted requests):")
  for (const count of endpoints.rpc) {
    console.log(`- ${count.endpoint}: ${count.roundTrips} (${count.methods.join(", ")})`)
  }
  if (endpoints.notMeasured.length > 0) console.log("\nNot measured:")
  for (const each of endpoints.notMeasured) console.log(`- ${each.endpoint} (${each.store}): ${each.reason}`)
  const described = machine()
  const loadAfter = loadavg()
  console.log(
    `\nMachine: ${described.cpu}, ${described.cores} cores, Node ${described.node}; load average ` +
      `${loadBefore[0]?.toFixed(1)} before, ${loadAfter[0]?.toFixed(1)} after (1 min)`
  )

  const results = new URL("./results/", import.meta.url)
  mkdirSync(results, { recursive: true })
  const report = {
    measuredAt: new Date().toISOString(),
    machine: described,
    loadAverage: { before: loadBefore, afterThroughput: loadAfterThroughput, after: loadAfter },
    throughputSettings: THROUGHPUT,
    endpointSettings: ENDPOINTS,
    throughput: rows,
    comparisons,
    endpoints
  }
  writeFileSync(new URL("http.json", results), `${JSON.stringify(report, null, 2)}\n`)
}
