// The Lambda example's functions (every route; sign-in alone) beside a trivial handler, Effect's floor (a sign-in body
// decoded with effect/Schema: bench/lambda/floor.ts) and the peer (better-auth's phone-number plugin:
// bench/lambda/betterAuth.ts), bundled as the functions are, under AWS's runtime interface client on a loopback Runtime API, state on a real redis-server: bundle bytes (per package from esbuild's metafile),
// cold start (spawn → first answer: a sign-in, and for the function of every route also a kernel tx answered 401),
// cold import(), peak RSS after INVOCATIONS invocations; the rows alternate. Method: bench/README.md.
import { spawnSync } from "node:child_process"
import { generateKeyPairSync } from "node:crypto"
import { readFileSync } from "node:fs"
import { mkdtemp, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { build } from "esbuild"
import { type Bundle, buildHandlers, bundleOptions, bundlePath } from "../examples/lambda/scripts/build.ts"
import {
  lambdaNodeFlags,
  memorySizeMb,
  runtimeKind,
  spawnRuntime,
  startRuntimeApi
} from "../examples/lambda/test/runtimeApi.ts"
import { eventFor } from "../packages/adapter-lambda/test/events.ts"
import { startRedisServer } from "../packages/store-redis/test/redis-server.ts"
import { keepResults, printTable } from "./table.ts"

/** Cold starts per row (default 10; `BENCH_LAMBDA_COLD_STARTS=4` for a quick look). */
const COLD_STARTS = Number(process.env.BENCH_LAMBDA_COLD_STARTS ?? 10)
const INVOCATIONS = 600

/**
 * The settings the example's functions start with in the benchmarks: Redis at `redisUrl`, a master secret, a fresh
 * signing key, SMS codes to the log (which the benchmark discards).
 */
export const functionEnvironment = (redisUrl: string): Record<string, string> => ({
  REDIS_URL: redisUrl,
  WALLETGATE_MASTER_SECRET: "bench-master-secret-0123456789abcdef0123456789",
  WALLETGATE_SIGNING_KEY: generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  WALLETGATE_SMS: "console"
})

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2
}
const round = (value: number, digits = 1) => Number(value.toFixed(digits))

/** The `n`th sign-in as an HTTP API event, each for another phone (+1 415 230-0000, …) from another address. */
const signIn = (n: number) => {
  const phone = `+1415${230 + Math.floor(n / 10_000)}${String(n % 10_000).padStart(4, "0")}`
  const headers = { "content-type": "application/json" }
  const request = { method: "POST", path: "/functions/v1/signInWithOTP", headers, body: JSON.stringify({ phone }) }
  const event = eventFor("HTTP API v2", request) as {
    requestContext: { http: { sourceIp: string } }
  }
  event.requestContext.http.sourceIp = `198.51.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`
  return event
}

/**
 * A wallet batch as an HTTP API event, from a client whose bearer token is not one: answered 401 by the kernel's route
 * (it authenticates before reading the body), so the first answer of a function to it includes loading that route's
 * code, without a chain.
 */
const kernelTx = () =>
  eventFor("HTTP API v2", {
    method: "POST",
    path: "/v1/kernel/tx",
    headers: { "content-type": "application/json", authorization: "Bearer not-a-token" },
    body: JSON.stringify({ chain: "1", calls: [{ to: "0x0000000000000000000000000000000000000001", value: "0" }] })
  })

/** One function measured under the runtime: its file (`<taskRoot>/<handler file>.mjs`) and bundle bytes. */
interface Target {
  readonly name: string
  readonly file: string
  readonly bytes: number
  /** Whether it serves wallet batches: its cold start is then also timed with a kernel tx as first request. */
  readonly kernel?: boolean
}

/**
 * A fresh runtime process for `target`: from its spawn to its first answer (a sign-in, answered 200, or with `kernel`
 * a kernel tx, answered 401), then `invocations` more sign-ins.
 */
const coldStart = async (target: Target, env: Record<string, string>, invocations = 0, kernel = false) => {
  const api = await startRuntimeApi()
  const started = Date.now()
  const [, taskRoot = "", file = ""] = /^(.*)\/([^/]+)\.mjs$/.exec(target.file) ?? []
  const runtime = spawnRuntime({ api, taskRoot, handler: `${file}.handler`, env })
  try {
    const first = await api.invoke(kernel ? kernelTx() : signIn(0))
    const status = (first.body as { statusCode?: number }).statusCode
    if (first.kind !== "response" || status !== (kernel ? 401 : 200)) {
      throw new Error(`${target.name}: the first answer was ${JSON.stringify(first.body)}\n${runtime.output()}`)
    }
    for (let n = 1; n <= invocations; n++) await api.invoke(signIn(n))
    // The runtime process's peak resident set (Linux).
    const proc = readFileSync(`/proc/${runtime.child.pid}/status`, "utf8")
    const peakKb = Number(/VmHWM:\s+(\d+) kB/.exec(proc)?.[1] ?? Number.NaN)
    return { ms: first.at - started, peakMb: peakKb / 1024 }
  } finally {
    await runtime.kill()
    await api.stop()
  }
}

/** One cold import() of `file`, in a fresh node process with `env`, started with Lambda's heap flags. */
const importMs = (file: string, env: Record<string, string>): number => {
  const timed =
    "const t = performance.now(); await import(process.argv[1]); console.log(performance.now() - t); process.exit(0)"
  const args = [...lambdaNodeFlags(memorySizeMb), "--input-type=module", "-e", timed, file]
  const child = spawnSync(process.execPath, args, { encoding: "utf8", env: { PATH: process.env.PATH ?? "", ...env } })
  if (child.status !== 0) throw new Error(`import() of ${file} failed:\n${child.stderr}`)
  return Number(child.stdout.trim().split("\n").at(-1))
}

/** Bytes per package in a bundle (esbuild's metafile), largest first. */
const bytesPerPackage = (bundle: Bundle): Array<[string, number]> => {
  const totals = new Map<string, number>()
  for (const output of Object.values(bundle.metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const name =
        /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1] ??
        /packages\/([^/]+)\//.exec(input)?.[1]?.replace(/^/, "walletgate ") ??
        "the example"
      totals.set(name, (totals.get(name) ?? 0) + bytesInOutput)
    }
  }
  return [...totals].sort((a, b) => b[1] - a[1])
}

/**
 * Bundles bench/lambda/<name>.ts into `dir` with the options of the example's functions; resolves to its file and
 * bytes. better-auth's dist imports the modules it initialises lazily without naming anything, which its
 * `sideEffects: false` lets esbuild drop (its bundle then fails at import): its bundle ignores that field.
 */
const buildPeer = async (name: "floor" | "betterAuth", dir: string): Promise<{ file: string; bytes: number }> => {
  const file = join(dir, `${name}.mjs`)
  await build({
    ...bundleOptions("signIn"),
    entryPoints: [fileURLToPath(new URL(`./lambda/${name}.ts`, import.meta.url))],
    outfile: file,
    metafile: false,
    ...(name === "betterAuth" ? { ignoreAnnotations: true } : {})
  })
  return { file, bytes: readFileSync(file).length }
}

/** Measures, prints the tables and writes `bench/results/lambda.json`. */
export async function run(): Promise<void> {
  const bundles = await buildHandlers()
  const trivialRoot = await mkdtemp(join(tmpdir(), "walletgate-trivial-"))
  await writeFile(join(trivialRoot, "trivial.mjs"), "export const handler = async () => ({ statusCode: 200 })\n")
  const floor = await buildPeer("floor", trivialRoot)
  const peer = await buildPeer("betterAuth", trivialRoot)
  const targets: ReadonlyArray<Target> = [
    { name: "trivial handler", file: join(trivialRoot, "trivial.mjs"), bytes: 0 },
    { name: "Effect floor (effect/Schema decode)", ...floor },
    { name: "better-auth phone-number (memory)", ...peer },
    { name: "sign-in only", file: bundlePath("signIn"), bytes: bundles.signIn.bytes },
    { name: "every route", file: bundlePath("handler"), bytes: bundles.handler.bytes, kernel: true }
  ]
  const redis = await startRedisServer()
  const env = functionEnvironment(redis.url)
  // BENCH_LAMBDA_ROWS="trivial,every route": only the rows whose name holds one of these.
  const wanted = (process.env.BENCH_LAMBDA_ROWS ?? "").split(",").filter((name) => name !== "")
  const measured = targets.filter((target) => wanted.length === 0 || wanted.some((name) => target.name.includes(name)))
  const starts = new Map(
    measured.map((target) => [
      target,
      { sign: [] as Array<number>, kernel: [] as Array<number>, imports: [] as Array<number> }
    ])
  )
  const rows = []
  try {
    // Row after row within each round, so that the machine's load falls on every row alike.
    for (let i = 0; i < COLD_STARTS; i++) {
      for (const target of measured) {
        const times = starts.get(target)
        if (times === undefined) continue
        // Redis empty again before each: every cold start's sign-in is a first one.
        await redis.crash()
        await redis.restart()
        times.sign.push((await coldStart(target, env)).ms)
        if (target.kernel === true) times.kernel.push((await coldStart(target, env, 0, true)).ms)
        times.imports.push(importMs(pathToFileURL(target.file).href, env))
      }
    }
    for (const target of measured) {
      const times = starts.get(target)
      if (times === undefined) continue
      await redis.crash()
      await redis.restart()
      // One more runtime answers INVOCATIONS more: its peak RSS, not its cold start.
      const { peakMb } = await coldStart(target, env, INVOCATIONS)
      rows.push({
        target: target.name,
        bytes: target.bytes,
        coldStartMs: round(median(times.sign)),
        kernelFirstMs: times.kernel.length === 0 ? undefined : round(median(times.kernel)),
        importMs: round(median(times.imports)),
        peakRssMb: round(peakMb)
      })
    }
  } finally {
    await redis.stop()
  }
  const trivial = rows.find((row) => row.target === targets[0]?.name)?.coldStartMs ?? Number.NaN
  const floorImport = rows.find((row) => row.target === targets[1]?.name)?.importMs ?? Number.NaN
  const overTrivial = (ms: number) => (ms === trivial ? "-" : `+${round(ms - trivial)} ms`)
  const fallback = " (aws-lambda-ric is not built here: the cold starts are an import() loop's)"
  console.log(`runtime: ${runtimeKind}${runtimeKind === "aws-lambda-ric" ? "" : fallback}`)
  console.log(`node started as Lambda starts it for ${memorySizeMb} MB: ${lambdaNodeFlags(memorySizeMb).join(" ")}`)
  printTable(
    [
      "function",
      "bundle",
      `cold start (median of ${COLD_STARTS})`,
      "over trivial",
      "first kernel tx (401)",
      "over trivial",
      "import()",
      "× floor",
      "peak RSS"
    ],
    rows.map((row) => [
      row.target,
      row.bytes === 0 ? "-" : `${(row.bytes / 1024).toFixed(1)} KiB`,
      `${row.coldStartMs} ms`,
      overTrivial(row.coldStartMs),
      row.kernelFirstMs === undefined ? "-" : `${row.kernelFirstMs} ms`,
      row.kernelFirstMs === undefined ? "-" : overTrivial(row.kernelFirstMs),
      `${row.importMs} ms`,
      row.bytes === 0 || Number.isNaN(floorImport) ? "-" : `${(row.importMs / floorImport).toFixed(2)}×`,
      `${row.peakRssMb} MB`
    ])
  )
  const packages = Object.fromEntries(Object.entries(bundles).map(([name, bundle]) => [name, bytesPerPackage(bundle)]))
  console.log("")
  printTable(
    ["bytes per package", "every route", "sign-in only"],
    (packages.handler ?? [])
      .slice(0, 10)
      .map(([name, bytes]) => [
        name,
        `${(bytes / 1024).toFixed(1)} KiB`,
        `${((packages.signIn?.find(([other]) => other === name)?.[1] ?? 0) / 1024).toFixed(1)} KiB`
      ])
  )

  keepResults("lambda", {
    measuredAt: new Date().toISOString(),
    node: process.version,
    runtime: runtimeKind,
    nodeFlags: lambdaNodeFlags(memorySizeMb),
    rows,
    packages
  })
}
