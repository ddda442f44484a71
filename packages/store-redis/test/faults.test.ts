import {
  AccountLocks,
  ApiKeyStore,
  AutomationAccounts,
  ClientStore,
  embeddedPorts,
  GasLedger,
  IdempotencyStore,
  makeGateway,
  OrderIndex,
  OtpStore,
  PhoneE164,
  RateLimiter,
  StoreUnavailable,
  TransactionLog,
  UserId,
  UserStore
} from "@walletgate/core"
import { SmsOutbox } from "@walletgate/core/testing"
import { type RedisStorePorts, RedisStores } from "@walletgate/redis"
import { Effect, Fiber, Layer, Logger, ManagedRuntime } from "effect"
import { Redis } from "ioredis"
import { afterEach, describe, expect, it } from "vitest"
import { eventually, SIGN_IN, serve, VERIFY } from "./http"
import { type RedisServer, startRedisServer } from "./redis-server"

const PHONE = PhoneE164.make("+14155552671")
const NOW = 1_700_000_000_000
const BOUND_MS = 3000

const USER_ID = UserId.make("00000000-0000-4000-8000-000000000001")
const ACCOUNT = "0x00000000000000000000000000000000000000a1"
type Stores = ManagedRuntime.ManagedRuntime<RedisStorePorts, never>
type Operation = Effect.Effect<unknown, StoreUnavailable, RedisStorePorts>

const issue = OtpStore.use((store) =>
  store.issue(PHONE, { codeHash: "ab", expiresAt: NOW + 1, resendAt: NOW + 1 }, NOW)
)
const consume = OtpStore.use((store) => store.consume(PHONE, "ab", NOW, 5))
const findById = UserStore.use((store) => store.findById(USER_ID))
const probe = RateLimiter.use((limiter) => limiter.consume([{ key: "probe", limit: 1000, windowMs: 60_000 }], NOW))

/** One call of every store operation: each must fail with `StoreUnavailable` while Redis is away. */
const everyOperation: ReadonlyArray<readonly [string, Operation]> = [
  ["OtpStore.issue", issue],
  ["OtpStore.withdraw", OtpStore.use((store) => store.withdraw(PHONE, "ab"))],
  ["OtpStore.consume", consume],
  [
    "UserStore.findOrCreate",
    UserStore.use((store) => store.findOrCreate({ id: USER_ID, phone: PHONE, createdAt: NOW }))
  ],
  ["UserStore.findById", findById],
  ["RateLimiter.consume", probe],
  ["ClientStore.find", ClientStore.use((store) => store.find("wgc_app"))],
  [
    "ClientStore.save",
    ClientStore.use((store) => store.save({ clientId: "wgc_app", secretHash: "ab", providers: [], testMode: true }))
  ],
  ["ClientStore.remove", ClientStore.use((store) => store.remove("wgc_app"))],
  [
    "ApiKeyStore.save",
    ApiKeyStore.use((store) =>
      store.save({ id: "key000000001", mode: "test", hash: "ab", networks: [], accounts: [], createdAt: NOW })
    )
  ],
  ["ApiKeyStore.find", ApiKeyStore.use((store) => store.find("key000000001"))],
  ["ApiKeyStore.list", ApiKeyStore.use((store) => store.list)],
  ["ApiKeyStore.touch", ApiKeyStore.use((store) => store.touch("key000000001", NOW))],
  ["ApiKeyStore.revoke", ApiKeyStore.use((store) => store.revoke("key000000001", NOW))],
  ["AutomationAccounts.find", AutomationAccounts.use((accounts) => accounts.find("anvil", ACCOUNT))],
  [
    "AutomationAccounts.save",
    AutomationAccounts.use((accounts) => accounts.save({ address: ACCOUNT, network: "anvil", accountKey: "k" }))
  ],
  ["IdempotencyStore.claim", IdempotencyStore.use((store) => store.claim("k", "ab", NOW, 60_000))],
  [
    "IdempotencyStore.complete",
    IdempotencyStore.use((store) => store.complete("k", "owner", { status: 200, body: {} }, NOW, 60_000))
  ],
  [
    "IdempotencyStore.link",
    IdempotencyStore.use((store) => store.link("k", "owner", { id: "tx-1", txHash: "0xab" }, NOW, 60_000))
  ],
  ["IdempotencyStore.release", IdempotencyStore.use((store) => store.release("k", "owner"))],
  ["AccountLocks.acquire", AccountLocks.use((locks) => locks.acquire("31337:0xfaults", 60_000))],
  [
    "TransactionLog.save",
    TransactionLog.use((log) =>
      log.save({
        id: "tx-1",
        kind: "kernel",
        owner: "wgc_app",
        network: "anvil",
        chainId: 31337,
        account: ACCOUNT,
        txHash: "0xab",
        status: "submitted",
        createdAt: NOW,
        details: {}
      })
    )
  ],
  ["TransactionLog.find", TransactionLog.use((log) => log.find("tx-1"))],
  ["TransactionLog.findByHash", TransactionLog.use((log) => log.findByHash("0xab"))],
  [
    "TransactionLog.settle",
    TransactionLog.use((log) => log.settle("tx-1", { status: "confirmed", blockNumber: 1, gasUsed: "21000" }))
  ],
  ["TransactionLog.discard", TransactionLog.use((log) => log.discard("tx-1"))],
  [
    "GasLedger.reserve",
    GasLedger.use((ledger) => ledger.reserve("1:app:a", [{ name: "app", limit: 10 }], 1, 60_000, NOW))
  ],
  ["GasLedger.used", GasLedger.use((ledger) => ledger.used("1:app:a", "app", 60_000, NOW))],
  ["GasLedger.release", GasLedger.use((ledger) => ledger.release("1:app:a", ["app"], 1, 60_000, NOW, NOW))],
  ["OrderIndex.cursor", OrderIndex.use((index) => index.cursor("net:1"))],
  [
    "OrderIndex.record",
    OrderIndex.use((index) =>
      index.record("net:1", {
        after: undefined,
        toBlock: 1n,
        approvals: [],
        sweeps: [],
        transfers: [{ token: ACCOUNT, from: ACCOUNT, to: ACCOUNT, time: 1 }]
      })
    )
  ],
  ["OrderIndex.standingApprovals", OrderIndex.use((index) => index.standingApprovals("net:1"))],
  ["OrderIndex.sweeps", OrderIndex.use((index) => index.sweeps("net:1"))],
  ["OrderIndex.lastTransfers", OrderIndex.use((index) => index.lastTransfers("net:1", ACCOUNT))]
]

const cleanups: Array<() => Promise<void>> = []
const logLines: Array<string> = []
afterEach(async () => {
  logLines.length = 0
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const startServer = async () => {
  const server = await startRedisServer()
  cleanups.push(() => server.stop())
  return server
}

const storesOn = (
  server: RedisServer,
  options: { commandTimeoutMs?: number; connectTimeoutMs?: number } = {}
): Stores => {
  const capture = Logger.map(Logger.formatJson, (line) => {
    logLines.push(line)
  })
  const runtime = ManagedRuntime.make(
    RedisStores.layer({ url: server.url, ...options }).pipe(Layer.provideMerge(Logger.layer([capture])))
  )
  cleanups.push(() => runtime.dispose())
  return runtime
}

/** Runs `effect` and returns its failure, how long it took; a success or a defect fails the test. */
const failureOf = async (runtime: Stores, effect: Operation) => {
  const started = performance.now()
  const error = await runtime.runPromise(Effect.flip(effect))
  return { error, ms: performance.now() - started }
}

const expectEveryOperationUnavailable = async (runtime: Stores) => {
  for (const [operation, effect] of everyOperation) {
    const { error, ms } = await failureOf(runtime, effect)
    expect(error).toBeInstanceOf(StoreUnavailable)
    expect(error.operation).toBe(operation)
    expect(ms).toBeLessThan(BOUND_MS)
  }
}

/** Whether the stores answer a call now. */
const answers = (runtime: Stores) => () =>
  runtime.runPromise(probe).then(
    () => true,
    () => false
  )

describe("RedisStores when Redis fails", () => {
  it("fails every operation with StoreUnavailable at once after Redis crashed, and recovers after its restart", async () => {
    const server = await startServer()
    const runtime = storesOn(server)
    expect(await runtime.runPromise(issue)).toEqual({ _tag: "Issued" })

    await server.crash()
    await expectEveryOperationUnavailable(runtime)
    // Each failure is logged with its operation, and never with a key (keys hold phone numbers).
    const failures = logLines.filter((line) => line.includes("walletgate: Redis call failed"))
    expect(failures.length).toBeGreaterThanOrEqual(everyOperation.length)
    expect(failures.join("\n")).toContain("OtpStore.consume")
    expect(logLines.join("\n")).not.toContain("4155552671")

    await server.restart()
    await eventually("the stores answer again", answers(runtime))
  })

  it("fails with StoreUnavailable, not a defect, when a key holds something else", async () => {
    const server = await startServer()
    const runtime = storesOn(server)
    const intruder = new Redis(server.url)
    cleanups.push(async () => {
      await intruder.quit()
    })
    await intruder.set(`walletgate:{otp:${PHONE}}`, "not a hash")
    await intruder.set("walletgate:{users}:id:00000000-0000-4000-8000-000000000001", "{not json")
    const wrongType = await failureOf(runtime, issue)
    expect(wrongType.error).toEqual(new StoreUnavailable({ operation: "OtpStore.issue" }))
    const garbled = await failureOf(runtime, findById)
    expect(garbled.error).toEqual(new StoreUnavailable({ operation: "UserStore.findById" }))
    expect(logLines.join("\n")).toContain("WRONGTYPE")
  })

  it("fails with StoreUnavailable, not a defect, when a stored value is not what the port stores", async () => {
    const server = await startServer()
    const runtime = storesOn(server)
    const intruder = new Redis(server.url)
    cleanups.push(async () => {
      await intruder.quit()
    })
    // Well-formed JSON of the wrong shape, and values that break the ports' schemas.
    await intruder.set("walletgate:{app:wgc_app}", JSON.stringify({ clientId: "wgc_app", providers: [] }))
    await intruder.hset("walletgate:{apikeys}", "k:key000000001", JSON.stringify({ id: "key000000001", mode: "root" }))
    await intruder.hset("walletgate:{apikeys}", "k:key000000002", "{}", "u:key000000003", "soon")
    await intruder.set(
      `walletgate:{automation:anvil:${ACCOUNT}}`,
      JSON.stringify({
        address: ACCOUNT,
        network: "anvil",
        accountKey: "k",
        plan: { asset: ACCOUNT, recipients: [{ address: ACCOUNT, shareBps: 5000 }], minimumPayout: "0", reserve: "0" }
      })
    )
    await intruder.hset("walletgate:{idem:k}", "f", "ab", "e", String(NOW + 60_000), "d", '{"status":"ok"}')
    await intruder.hset("walletgate:{tx:tx-1}", "r", JSON.stringify({ id: "tx-1", status: "lost" }))
    const corrupt: ReadonlyArray<readonly [string, Operation]> = [
      ["ClientStore.find", ClientStore.use((store) => store.find("wgc_app"))],
      ["ApiKeyStore.find", ApiKeyStore.use((store) => store.find("key000000001"))],
      ["ApiKeyStore.list", ApiKeyStore.use((store) => store.list)],
      ["AutomationAccounts.find", AutomationAccounts.use((accounts) => accounts.find("anvil", ACCOUNT))],
      ["IdempotencyStore.claim", IdempotencyStore.use((store) => store.claim("k", "ab", NOW, 60_000))],
      ["TransactionLog.find", TransactionLog.use((log) => log.find("tx-1"))]
    ]
    for (const [operation, effect] of corrupt) {
      const { error } = await failureOf(runtime, effect)
      expect(error).toEqual(new StoreUnavailable({ operation }))
    }
    expect(logLines.join("\n")).toContain("unexpected reply")
  })

  it("fails with StoreUnavailable after commandTimeoutMs when Redis stops answering", async () => {
    const server = await startServer()
    const runtime = storesOn(server, { commandTimeoutMs: 200 })
    expect(await runtime.runPromise(consume)).toBe("Rejected")

    server.freeze()
    try {
      for (const [, effect] of everyOperation) {
        const { error, ms } = await failureOf(runtime, effect)
        expect(error).toBeInstanceOf(StoreUnavailable)
        expect(ms).toBeGreaterThanOrEqual(150)
        expect(ms).toBeLessThan(1000)
      }
    } finally {
      server.thaw()
    }
    await eventually("the stores answer again", answers(runtime))
  })

  it("starts while Redis is down, within connectTimeoutMs, and serves once Redis is up", async () => {
    const server = await startServer()
    await server.crash()
    const started = performance.now()
    const runtime = storesOn(server, { connectTimeoutMs: 300 })
    await runtime.runPromise(Effect.void)
    expect(performance.now() - started).toBeLessThan(BOUND_MS)
    await expectEveryOperationUnavailable(runtime)

    await server.restart()
    await eventually("the stores answer", answers(runtime))
  })

  it("quits the client it made on dispose, and leaves a caller's client open", async () => {
    const server = await startServer()
    const observer = new Redis(server.url)
    cleanups.push(async () => {
      await observer.quit()
    })
    const clientNames = async () =>
      String(await observer.client("LIST"))
        .split("\n")
        .filter((line) => line.includes("name=walletgate"))

    const owned = ManagedRuntime.make(RedisStores.layer({ url: server.url }))
    await owned.runPromise(Effect.void)
    expect(await clientNames()).toHaveLength(1)
    await owned.dispose()
    await eventually("the client is gone", async () => (await clientNames()).length === 0)

    const callers = new Redis(server.url, { connectionName: "walletgate-caller" })
    cleanups.push(async () => {
      callers.disconnect()
    })
    const borrowed = ManagedRuntime.make(RedisStores.layer({ client: callers }))
    expect(await answers(borrowed)()).toBe(true)
    await borrowed.dispose()
    expect(callers.status).toBe("ready")
    expect(await callers.ping()).toBe("PONG")
  })

  it("refuses an invalid option at once", () => {
    expect(() => RedisStores.layer({ url: "redis://127.0.0.1", keyPrefix: "app{1}:" })).toThrow(RangeError)
    expect(() => RedisStores.layer({ url: "redis://127.0.0.1", commandTimeoutMs: 0 })).toThrow(RangeError)
    expect(() => RedisStores.layer({ url: "redis://127.0.0.1", connectTimeoutMs: 1.5 })).toThrow(RangeError)
  })
})

describe("account locks on Redis", () => {
  const KEY = "31337:0x00000000000000000000000000000000000000a1"
  const hold = (ttlMs: number) => AccountLocks.use((locks) => locks.acquire(KEY, ttlMs))

  it("gives up waiting for a held lock after lockWaitMs with StoreUnavailable (account lock wait)", async () => {
    const server = await startServer()
    const runtime = ManagedRuntime.make(RedisStores.layer({ url: server.url, lockWaitMs: 300 }))
    cleanups.push(() => runtime.dispose())
    const held = await runtime.runPromise(hold(60_000))
    const { error, ms } = await failureOf(runtime, hold(60_000))
    expect(error).toEqual(new StoreUnavailable({ operation: "account lock wait" }))
    expect(ms).toBeGreaterThanOrEqual(280)
    expect(ms).toBeLessThan(1000)
    await runtime.runPromise(held.release)
    await runtime.runPromise(hold(60_000))
  })

  it("logs and swallows a release that cannot reach Redis: the ttl frees the lock", async () => {
    const server = await startServer()
    const runtime = storesOn(server)
    const held = await runtime.runPromise(hold(500))
    await server.crash()
    await runtime.runPromise(held.release)
    expect(logLines.join("\n")).toContain("AccountLocks.release")
    expect(logLines.join("\n")).toContain("it frees itself when its ttl ends")
  })

  it("frees a lock whose acquisition was interrupted while its SET was on its way", async () => {
    const server = await startServer()
    const runtime = storesOn(server, { commandTimeoutMs: 5000 })
    const observer = new Redis(server.url)
    cleanups.push(async () => {
      await observer.quit()
    })
    await runtime.runPromise(Effect.void)
    // Frozen, Redis takes the SET off the socket only after the acquisition was interrupted.
    server.freeze()
    const acquisition = runtime.runFork(hold(60_000))
    await new Promise((resolve) => setTimeout(resolve, 100))
    const interrupted = runtime.runPromise(Fiber.interrupt(acquisition))
    await new Promise((resolve) => setTimeout(resolve, 100))
    server.thaw()
    await interrupted
    expect(await observer.exists(`walletgate:{lock:${KEY}}`)).toBe(0)
  })
})

describe("a gateway on Redis over Express when Redis fails", () => {
  it("answers 503 store_unavailable with retry-after, never 500 or 401, and recovers after Redis restarts", async () => {
    const server = await startServer()
    const outbox = new SmsOutbox()
    const gateway = makeGateway({
      ports: Layer.mergeAll(
        embeddedPorts({ otp: { sendsPerIpPerHour: 1000 } }),
        outbox.layer,
        RedisStores.layer({ url: server.url })
      ),
      loggers: []
    })
    const http = await serve(gateway)
    cleanups.push(http.close)

    expect((await http.post(SIGN_IN, { phone: PHONE })).status).toBe(200)
    const code = outbox.latestCode(PHONE)
    await server.crash()

    for (const [path, body] of [
      [SIGN_IN, { phone: "+14169671111" }],
      [VERIFY, { phone: PHONE, token: code }]
    ] as const) {
      const started = performance.now()
      const answer = await http.post(path, body)
      expect(performance.now() - started).toBeLessThan(BOUND_MS)
      expect(answer.status).toBe(503)
      expect(answer.headers.get("content-type")).toBe("application/problem+json")
      expect(answer.headers.get("retry-after")).toBe("1")
      expect(await answer.json()).toMatchObject({ status: 503, code: "store_unavailable" })
    }

    await server.restart()
    await eventually(
      "sign-in works again",
      async () => (await http.post(SIGN_IN, { phone: "+14169671111" })).status === 200
    )
  })
})
