// Ops/s of the state stores' hot paths, in memory and on Redis over loopback (a redis-server of its own
// on a free port). Each measurement runs for MEASURE_MS after a short warm-up; Redis is measured with one
// call at a time (latency-bound, with p50/p99) and with 64 in flight (what a busy instance does).
import { spawnSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import {
  AccountLocks,
  IdempotencyStore,
  OtpStore,
  PhoneE164,
  RateLimiter,
  type User,
  UserId,
  UserStore
} from "@walletgate/core"
import { RedisStores } from "@walletgate/redis"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { startRedisServer } from "../packages/store-redis/test/redis-server.ts"

const MEASURE_MS = 2000
const WARM_UP_MS = 250
const IN_FLIGHT = 64
const PHONES = 1000

type Ports = OtpStore | UserStore | RateLimiter | IdempotencyStore | AccountLocks
type Stores = ManagedRuntime.ManagedRuntime<Ports, never>

const phone = (n: number) => PhoneE164.make(`+1415${2_000_000 + n}`)
const digest = (n: number) => n.toString(16).padStart(64, "0")
const userOf = (n: number): User => ({
  id: UserId.make(`00000000-0000-4000-8000-${String(n).padStart(12, "0")}`),
  phone: phone(n),
  createdAt: Date.now()
})

/** One hot path: set-up run once per store, then the operation measured, numbered from 0. */
interface HotPath {
  readonly name: string
  readonly setUp: Effect.Effect<unknown, unknown, Ports>
  readonly operation: (n: number) => Effect.Effect<unknown, unknown, Ports>
}

// Numbers far apart per path and run, so that no run sees another's records.
let serial = 0
const fresh = () => ++serial * 1_000_000

const hotPaths: ReadonlyArray<HotPath> = [
  {
    name: "OtpStore.consume (wrong code: compare, count)",
    setUp: OtpStore.use((store) =>
      Effect.forEach(
        Array.from({ length: PHONES }, (_, n) => n),
        (n) =>
          store.issue(
            phone(n),
            { codeHash: digest(1), expiresAt: Date.now() + 600_000, resendAt: Date.now() },
            Date.now()
          )
      )
    ),
    operation: (n) => OtpStore.use((store) => store.consume(phone(n % PHONES), digest(2), Date.now(), 1e9))
  },
  {
    name: "OtpStore.issue + consume (right code)",
    setUp: Effect.void,
    operation: (n) =>
      OtpStore.use((store) => {
        const now = Date.now()
        const to = phone(PHONES + (n % 5_000_000))
        return store
          .issue(to, { codeHash: digest(n), expiresAt: now + 300_000, resendAt: now }, now)
          .pipe(Effect.andThen(store.consume(to, digest(n), now, 5)))
      })
  },
  {
    name: "RateLimiter.consume",
    setUp: Effect.void,
    operation: (n) =>
      RateLimiter.use((limiter) =>
        limiter.consume([{ key: `ip:${n % PHONES}`, limit: 1e9, windowMs: 3_600_000 }], Date.now())
      )
  },
  {
    name: "UserStore.findOrCreate (existing user)",
    setUp: UserStore.use((store) =>
      Effect.forEach(
        Array.from({ length: PHONES }, (_, n) => n),
        (n) => store.findOrCreate(userOf(n))
      )
    ),
    operation: (n) => UserStore.use((store) => store.findOrCreate(userOf(n % PHONES)))
  },
  {
    // Every claim finds its key free (a new Idempotency-Key): the set-if-absent path of each request.
    name: "IdempotencyStore.claim (new key)",
    setUp: Effect.void,
    operation: (n) => IdempotencyStore.use((store) => store.claim(`bench:${n}`, digest(1), Date.now(), 24 * 3_600_000))
  },
  {
    name: "AccountLocks.acquire + release (free lock)",
    setUp: Effect.void,
    operation: (n) =>
      AccountLocks.use((locks) => Effect.flatMap(locks.acquire(`31337:${n % PHONES}`, 60_000), (held) => held.release))
  }
]

interface Measurement {
  readonly opsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
}

/** Runs `operation` with `inFlight` callers for `ms`, after a warm-up. */
const measure = async (stores: Stores, path: HotPath, inFlight: number, ms: number): Promise<Measurement> => {
  const base = fresh()
  let next = 0
  const loop = async (until: number, latencies: Array<number> | undefined) => {
    while (performance.now() < until) {
      const started = performance.now()
      await stores.runPromise(path.operation(base + next++))
      latencies?.push(performance.now() - started)
    }
  }
  await loop(performance.now() + WARM_UP_MS, undefined)
  const latencies: Array<number> = []
  const started = performance.now()
  const until = started + ms
  await Promise.all(Array.from({ length: inFlight }, () => loop(until, latencies)))
  const elapsed = performance.now() - started
  latencies.sort((a, b) => a - b)
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN
  return { opsPerSecond: (latencies.length / elapsed) * 1000, p50Ms: at(0.5), p99Ms: at(0.99) }
}

const memoryStores = (): Stores =>
  ManagedRuntime.make(
    Layer.mergeAll(OtpStore.memory, UserStore.memory, RateLimiter.memory, IdempotencyStore.memory, AccountLocks.memory)
  )

const round = (value: number, digits = 0) => Number(value.toFixed(digits))

/** Measures every hot path, prints the table and writes `bench/results/stores.json`. */
export async function run(): Promise<void> {
  const server = await startRedisServer()
  const memory = memoryStores()
  const redis: Stores = ManagedRuntime.make(RedisStores.layer({ url: server.url, keyPrefix: "bench:" }))
  const rows = []
  try {
    for (const path of hotPaths) {
      await memory.runPromise(path.setUp)
      await redis.runPromise(path.setUp)
      const inMemory = await measure(memory, path, 1, MEASURE_MS)
      const oneAtATime = await measure(redis, path, 1, MEASURE_MS)
      const busy = await measure(redis, path, IN_FLIGHT, MEASURE_MS)
      rows.push({
        hotPath: path.name,
        memoryOpsPerSecond: round(inMemory.opsPerSecond),
        redisOpsPerSecond: round(oneAtATime.opsPerSecond),
        redisP50Ms: round(oneAtATime.p50Ms, 3),
        redisP99Ms: round(oneAtATime.p99Ms, 3),
        redisOpsPerSecondBusy: round(busy.opsPerSecond)
      })
    }
  } finally {
    await redis.dispose()
    await memory.dispose()
    await server.stop()
  }

  const header = ["hot path", "memory ops/s", "redis ops/s (1)", "p50 ms", "p99 ms", `redis ops/s (${IN_FLIGHT})`]
  const lines = rows.map((row) => [
    row.hotPath,
    String(row.memoryOpsPerSecond),
    String(row.redisOpsPerSecond),
    String(row.redisP50Ms),
    String(row.redisP99Ms),
    String(row.redisOpsPerSecondBusy)
  ])
  const widths = header.map((title, i) => Math.max(title.length, ...lines.map((line) => line[i]?.length ?? 0)))
  const format = (cells: ReadonlyArray<string>) =>
    `| ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join(" | ")} |`
  console.log([format(header), format(widths.map((width) => "-".repeat(width))), ...lines.map(format)].join("\n"))

  const redisVersion = spawnSync("redis-server", ["--version"], { encoding: "utf8" }).stdout.trim()
  const results = new URL("./results/", import.meta.url)
  mkdirSync(results, { recursive: true })
  const report = {
    measuredAt: new Date().toISOString(),
    node: process.version,
    redisVersion,
    measureMs: MEASURE_MS,
    busyInFlight: IN_FLIGHT,
    rows
  }
  writeFileSync(new URL("stores.json", results), `${JSON.stringify(report, null, 2)}\n`)
}
