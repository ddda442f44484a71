// The Lambda adapter. Invocations per second of the handler in process, for each event kind, one call at a
// time as a Lambda container makes them, beside gateway.handle fed the neutral request: RUNS runs of RUN_MS
// each after a warm-up, the targets taken in turn, the median reported. Each invocation is a signInWithOTP
// for a phone not seen before (200: phone parsing, HMAC, store, rate limits, SMS to a silent outbox).
// Then the example's bundle (examples/lambda): its size, and the median of COLD_STARTS cold `import()`
// times, each in a fresh node process, with the first invocation after it.
import { spawnSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { pathToFileURL } from "node:url"
import { embeddedPorts, type Gateway, type GatewayRequest, makeGateway, SmsSender } from "@walletgate/core"
import type { ConformanceRequest } from "@walletgate/core/testing"
import { createHandler } from "@walletgate/lambda"
import * as Layer from "effect/Layer"
import { buildHandler, bundlePath } from "../examples/lambda/scripts/build.ts"
import { eventFor, eventKinds } from "../packages/adapter-lambda/test/events.ts"

const RUNS = 5
const RUN_MS = 1000
const WARM_UP_MS = 300
const COLD_STARTS = 10

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2
}
const round = (value: number, digits = 0) => Number(value.toFixed(digits))

/** The body of the `n`th sign-in, each for another phone: +1 415 230-0000, +1 415 230-0001, … */
const signInBody = (n: number): string =>
  JSON.stringify({ phone: `+1415${230 + Math.floor(n / 10_000)}${String(n % 10_000).padStart(4, "0")}` })
const signIn = (n: number): ConformanceRequest => ({
  method: "POST",
  path: "/functions/v1/signInWithOTP",
  headers: { "content-type": "application/json" },
  body: signInBody(n)
})

/** What is measured: one way of invoking, over a gateway of its own (no target pays for another's state). */
interface Target {
  readonly name: string
  readonly gateway: Gateway
  /** Invokes with the `n`th sign-in; resolves to the status. */
  readonly invoke: (n: number) => Promise<number>
  readonly runs: Array<number>
  invocations: number
}

const target = (name: string, invoker: (gateway: Gateway) => (n: number) => Promise<number>): Target => {
  const gateway = makeGateway({
    ports: Layer.mergeAll(
      embeddedPorts({
        otp: {
          sendsPerIpPerHour: Number.MAX_SAFE_INTEGER,
          sendsPerPrefixPerHour: Number.MAX_SAFE_INTEGER,
          globalSendsPerHour: Number.MAX_SAFE_INTEGER
        }
      }),
      SmsSender.console(() => undefined)
    ),
    loggers: []
  })
  return { name, gateway, invoke: invoker(gateway), runs: [], invocations: 0 }
}

/** Invokes `target` one call at a time for `ms`; resolves to the invocations per second. */
const loop = async (target: Target, ms: number): Promise<number> => {
  let count = 0
  const started = performance.now()
  while (performance.now() - started < ms) {
    const status = await target.invoke(target.invocations++)
    if (status !== 200) throw new Error(`${target.name}: an invocation answered ${status}`)
    count++
  }
  return count / ((performance.now() - started) / 1000)
}

// Run in each fresh process: the bundle's import, then one invocation, timed; printed as the last line.
const COLD_START = `
const started = performance.now()
const { handler } = await import(process.argv[1])
const imported = performance.now()
const result = await handler(JSON.parse(process.argv[2]))
console.log(JSON.stringify({ importMs: imported - started, firstInvocationMs: performance.now() - imported, status: result.statusCode }))
`

/** One cold start of the bundle in a fresh node process. */
const coldStart = (): { importMs: number; firstInvocationMs: number } => {
  const event = JSON.stringify(eventFor("HTTP API v2", signIn(0)))
  const child = spawnSync(
    process.execPath,
    ["--input-type=module", "-e", COLD_START, pathToFileURL(bundlePath).href, event],
    { encoding: "utf8", env: { PATH: process.env.PATH ?? "" } }
  )
  if (child.status !== 0) throw new Error(`the bundle's cold start failed:\n${child.stderr}`)
  const measured = JSON.parse(child.stdout.trim().split("\n").at(-1) ?? "") as {
    importMs: number
    firstInvocationMs: number
    status: number
  }
  if (measured.status !== 200) throw new Error(`the first invocation answered ${measured.status}`)
  return measured
}

const table = (header: ReadonlyArray<string>, lines: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = header.map((title, i) => Math.max(title.length, ...lines.map((line) => line[i]?.length ?? 0)))
  const format = (cells: ReadonlyArray<string>) =>
    `| ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join(" | ")} |`
  return [format(header), format(widths.map((width) => "-".repeat(width))), ...lines.map(format)].join("\n")
}

/** Measures, prints the tables and writes `bench/results/lambda.json`. */
export async function run(): Promise<void> {
  const targets = [
    target("gateway.handle (no event)", (gateway) => async (n) => {
      const request: GatewayRequest = {
        method: "POST",
        path: "/functions/v1/signInWithOTP",
        query: new URLSearchParams(),
        headers: { "content-type": "application/json" },
        rawBody: new TextEncoder().encode(signInBody(n)),
        remoteAddress: "203.0.113.10"
      }
      return (await gateway.handle(request)).status
    }),
    ...eventKinds.map((kind) =>
      target(kind, (gateway) => {
        const handler = createHandler(gateway)
        // Built once; each invocation only changes the body (every body has the same length).
        const event = eventFor(kind, signIn(0))
        return async (n) => (await handler({ ...event, body: signInBody(n) })).statusCode
      })
    )
  ]
  try {
    for (const each of targets) await loop(each, WARM_UP_MS)
    // In turn, so that a noisy moment of the machine falls on every target alike.
    for (let run = 0; run < RUNS; run++) for (const each of targets) each.runs.push(await loop(each, RUN_MS))
  } finally {
    for (const each of targets) await each.gateway.dispose()
  }
  const rows = targets.map((each) => ({
    target: each.name,
    invocationsPerSecond: round(median(each.runs)),
    runs: each.runs.map((perSecond) => round(perSecond))
  }))
  console.log(
    table(
      ["handler fed", "invocations/s (median)", "min", "max"],
      rows.map((row) => [
        row.target,
        String(row.invocationsPerSecond),
        String(Math.min(...row.runs)),
        String(Math.max(...row.runs))
      ])
    )
  )

  const bytes = await buildHandler()
  const coldStarts = Array.from({ length: COLD_STARTS }, coldStart)
  const bundle = {
    bytes,
    coldImportMsMedian: round(median(coldStarts.map((start) => start.importMs)), 1),
    firstInvocationMsMedian: round(median(coldStarts.map((start) => start.firstInvocationMs)), 1),
    coldStarts: coldStarts.map((start) => ({
      importMs: round(start.importMs, 1),
      firstInvocationMs: round(start.firstInvocationMs, 1)
    }))
  }
  console.log(
    `\n${table(
      ["examples/lambda bundle", "value"],
      [
        ["size", `${(bytes / 1024).toFixed(1)} KiB (${bytes} bytes)`],
        [`cold import(), median of ${COLD_STARTS}`, `${bundle.coldImportMsMedian} ms`],
        ["first invocation after it, median", `${bundle.firstInvocationMsMedian} ms`]
      ]
    )}`
  )

  const results = new URL("./results/", import.meta.url)
  mkdirSync(results, { recursive: true })
  const report = {
    measuredAt: new Date().toISOString(),
    node: process.version,
    request: "POST /functions/v1/signInWithOTP, another phone each time (200)",
    runs: RUNS,
    runMs: RUN_MS,
    rows,
    bundle
  }
  writeFileSync(new URL("lambda.json", results), `${JSON.stringify(report, null, 2)}\n`)
}
