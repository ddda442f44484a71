import {
  AccountLocks,
  ApiKeyStore,
  AutomationAccounts,
  ClientStore,
  GasLedger,
  IdempotencyStore,
  OtpStore,
  PhoneE164,
  RateLimiter,
  TransactionLog,
  UserId,
  UserStore
} from "@walletgate/core"
import type { ApiKeyRecord } from "@walletgate/core/payout"
import type { TxRecord } from "@walletgate/core/state"
import { type RedisStorePorts, RedisStores } from "@walletgate/redis"
import { Effect, ManagedRuntime } from "effect"
import { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "./http"
import { type RedisServer, startRedisServer } from "./redis-server"

// What the stores leave in Redis: key names, types and lifetimes (the README's key layout).
const PHONE = PhoneE164.make("+14155552671")
const USER_ID = UserId.make("00000000-0000-4000-8000-000000000007")
const HASH = "ab".repeat(32)

let server: RedisServer
let observer: Redis
let stores: ManagedRuntime.ManagedRuntime<RedisStorePorts, never>
beforeAll(async () => {
  server = await startRedisServer()
  observer = new Redis(server.url)
  stores = ManagedRuntime.make(RedisStores.layer({ url: server.url }))
})
afterAll(async () => {
  // Each is undefined if beforeAll failed before making it (redis-server missing, say).
  await stores?.dispose()
  await observer?.quit()
  await server?.stop()
})

describe("the Redis key layout", () => {
  it("keeps a phone's code in one hash tagged by the phone, until its expiry or resend time, whichever is later", async () => {
    const now = Date.now()
    const key = `walletgate:{otp:${PHONE}}`
    await stores.runPromise(
      OtpStore.use((store) =>
        store.issue(PHONE, { codeHash: HASH, expiresAt: now + 300_000, resendAt: now + 60_000 }, now)
      )
    )
    expect(await observer.type(key)).toBe("hash")
    expect(await observer.hgetall(key)).toEqual({
      h: HASH,
      e: String(now + 300_000),
      r: String(now + 60_000),
      f: "0"
    })
    const ttl = await observer.pttl(key)
    expect(ttl).toBeGreaterThan(290_000)
    expect(ttl).toBeLessThanOrEqual(300_000)

    // A wrong try counts and keeps the lifetime; the last allowed one voids the code but keeps the record.
    await stores.runPromise(OtpStore.use((store) => store.consume(PHONE, "cd".repeat(32), now + 1, 2)))
    expect(await observer.hget(key, "f")).toBe("1")
    await stores.runPromise(OtpStore.use((store) => store.consume(PHONE, "cd".repeat(32), now + 2, 2)))
    expect(await observer.hexists(key, "h")).toBe(0)
    expect(await observer.pttl(key)).toBeGreaterThan(290_000)
  })

  it("lets Redis delete a code record when its lifetime ends", async () => {
    const phone = PhoneE164.make("+14169671111")
    const now = Date.now()
    await stores.runPromise(
      OtpStore.use((store) => store.issue(phone, { codeHash: HASH, expiresAt: now + 50, resendAt: now + 50 }, now))
    )
    expect(await observer.exists(`walletgate:{otp:${phone}}`)).toBe(1)
    await eventually("the record expired", async () => (await observer.exists(`walletgate:{otp:${phone}}`)) === 0)
  })

  it("stores nothing for a code issued already past its lifetime", async () => {
    const phone = PhoneE164.make("+12127363100")
    const now = Date.now()
    const outcome = await stores.runPromise(
      OtpStore.use((store) => store.issue(phone, { codeHash: HASH, expiresAt: now, resendAt: now - 1 }, now))
    )
    expect(outcome).toEqual({ _tag: "Issued" })
    expect(await observer.exists(`walletgate:{otp:${phone}}`)).toBe(0)
  })

  it("keeps a rate-limit window in one hash tagged by its key's scope, until the window ends", async () => {
    const now = Date.now()
    const windowOf = (windowMs: number) => ({ start: now - (now % windowMs), end: now - (now % windowMs) + windowMs })
    await stores.runPromise(
      RateLimiter.use((limiter) =>
        limiter.consume(
          [
            { key: "otp:send:ip:203.0.113.9", limit: 5, windowMs: 3_600_000 },
            { key: "otp:send:phone:+14155552671", limit: 5, windowMs: 900_000 }
          ],
          now
        )
      )
    )
    for (const [key, windowMs] of [
      ["walletgate:{rate:otp}:send:ip:203.0.113.9", 3_600_000],
      ["walletgate:{rate:otp}:send:phone:+14155552671", 900_000]
    ] as const) {
      const { start, end } = windowOf(windowMs)
      expect(await observer.hgetall(key)).toEqual({ s: String(start), c: "1" })
      const ttl = await observer.pttl(key)
      expect(ttl).toBeGreaterThan(end - now - 10_000)
      expect(ttl).toBeLessThanOrEqual(end - now)
    }
  })

  it("keeps an app's gas budgets and its users' in one slot, {gas:<scope>}, until the window ends", async () => {
    const windowMs = 3_600_000
    const now = Date.now()
    const start = now - (now % windowMs)
    const scope = "31337:app:wgc_layout"
    const budgets = [
      { name: "app", limit: 1_000_000 },
      { name: "user:phone%3Aalice", limit: 100_000 }
    ] as const
    await stores.runPromise(GasLedger.use((ledger) => ledger.reserve(scope, budgets, 21_000, windowMs, now)))
    for (const key of [`walletgate:{gas:${scope}}:app`, `walletgate:{gas:${scope}}:user:phone%3Aalice`]) {
      expect(await observer.hgetall(key)).toEqual({ s: String(start), u: "21000" })
      const ttl = await observer.pttl(key)
      expect(ttl).toBeGreaterThan(start + windowMs - now - 10_000)
      expect(ttl).toBeLessThanOrEqual(start + windowMs - now)
    }
  })

  it("keeps users forever, under their phone and their id, both in the {users} slot", async () => {
    const user = { id: USER_ID, phone: PHONE, createdAt: 1_700_000_000_123 }
    await stores.runPromise(UserStore.use((store) => store.findOrCreate(user)))
    for (const key of [`walletgate:{users}:phone:${PHONE}`, `walletgate:{users}:id:${USER_ID}`]) {
      expect(JSON.parse((await observer.get(key)) ?? "null")).toEqual(user)
      expect(await observer.pttl(key)).toBe(-1)
    }
  })

  it("keeps an app forever as JSON under its client id", async () => {
    const app = {
      clientId: "wgc_layout",
      secretHash: HASH,
      providers: ["phone"],
      testMode: true
    } as const
    await stores.runPromise(ClientStore.use((store) => store.save(app)))
    const key = "walletgate:{app:wgc_layout}"
    expect(JSON.parse((await observer.get(key)) ?? "null")).toEqual(app)
    expect(await observer.pttl(key)).toBe(-1)
    await stores.runPromise(ClientStore.use((store) => store.remove(app.clientId)))
    expect(await observer.exists(key)).toBe(0)
  })

  it("keeps every API key forever in the one {apikeys} hash, its last use and revocation beside it", async () => {
    const record: ApiKeyRecord = {
      id: "layoutkey001",
      mode: "test",
      hash: HASH,
      networks: ["anvil"],
      accounts: [],
      createdAt: 1_700_000_000_000
    }
    await stores.runPromise(
      ApiKeyStore.use((store) =>
        store
          .save(record)
          .pipe(
            Effect.andThen(store.touch(record.id, 1_700_000_000_500)),
            Effect.andThen(store.revoke(record.id, 1_700_000_000_900))
          )
      )
    )
    const fields = await observer.hgetall("walletgate:{apikeys}")
    expect(JSON.parse(fields["k:layoutkey001"] ?? "null")).toEqual(record)
    expect(fields["u:layoutkey001"]).toBe("1700000000500")
    expect(fields["r:layoutkey001"]).toBe("1700000000900")
    expect(await observer.pttl("walletgate:{apikeys}")).toBe(-1)
  })

  it("keeps an automation account forever under its network and lower-case address", async () => {
    const account = { address: "0x00000000000000000000000000000000000000Ab", network: "anvil", accountKey: "layout" }
    await stores.runPromise(AutomationAccounts.use((accounts) => accounts.save(account)))
    const key = "walletgate:{automation:anvil:0x00000000000000000000000000000000000000ab}"
    expect(JSON.parse((await observer.get(key)) ?? "null")).toEqual(account)
    expect(await observer.pttl(key)).toBe(-1)
  })

  it("keeps an idempotency record in one hash tagged by its key, for its lease from the claim, its ttl from the link, then from the answer", async () => {
    const now = Date.now()
    const key = "walletgate:{idem:kernel:wgc_layout:order-1}"
    const claim = await stores.runPromise(
      IdempotencyStore.use((store) => store.claim("kernel:wgc_layout:order-1", HASH, now, 60_000))
    )
    if (claim._tag !== "Claimed") throw new Error(`expected a claim, got ${claim._tag}`)
    expect(await observer.hgetall(key)).toEqual({
      f: HASH,
      o: claim.owner,
      e: String(now + 60_000),
      l: String(now + 60_000)
    })
    expect(await observer.pttl(key)).toBeGreaterThan(50_000)
    expect(await observer.pttl(key)).toBeLessThanOrEqual(60_000)
    await stores.runPromise(
      IdempotencyStore.use((store) =>
        store.link("kernel:wgc_layout:order-1", claim.owner, { id: "tx-1", txHash: "0xab" }, now + 1, 86_400_000)
      )
    )
    expect(await observer.hget(key, "i")).toBe('{"id":"tx-1","txHash":"0xab"}')
    expect(await observer.hget(key, "e")).toBe(String(now + 1 + 86_400_000))
    expect(await observer.pttl(key)).toBeGreaterThan(86_000_000)
    await stores.runPromise(
      IdempotencyStore.use((store) =>
        store.complete(
          "kernel:wgc_layout:order-1",
          claim.owner,
          { status: 200, body: { ok: true } },
          now + 2,
          86_400_000
        )
      )
    )
    expect(await observer.hget(key, "d")).toBe('{"status":200,"body":{"ok":true}}')
    expect(await observer.hget(key, "e")).toBe(String(now + 2 + 86_400_000))
    expect(await observer.pttl(key)).toBeGreaterThan(86_000_000)
  })

  it("keeps a held lock as its owner token for its ttl, and nothing once released", async () => {
    const key = "walletgate:{lock:31337:0xlayout}"
    const held = await stores.runPromise(AccountLocks.use((locks) => locks.acquire("31337:0xlayout", 180_000)))
    expect(await observer.get(key)).toBe(held.owner)
    expect(await observer.pttl(key)).toBeGreaterThan(170_000)
    expect(await observer.pttl(key)).toBeLessThanOrEqual(180_000)
    await stores.runPromise(held.release)
    expect(await observer.exists(key)).toBe(0)
  })

  it("keeps a transaction forever in one hash, its outcome beside the record, and nothing once discarded", async () => {
    const record: TxRecord = {
      id: "00000000-0000-4000-8000-00000000a001",
      kind: "kernel",
      owner: "wgc_layout",
      network: "anvil",
      chainId: 31337,
      account: "0x00000000000000000000000000000000000000a1",
      txHash: `0x${HASH}`,
      status: "submitted",
      createdAt: 1_700_000_000_000,
      details: { userId: "phone:x" }
    }
    const key = `walletgate:{tx:${record.id}}`
    const outcome = { status: "confirmed", blockNumber: 7, gasUsed: "21000" } as const
    await stores.runPromise(
      TransactionLog.use((log) => log.save(record).pipe(Effect.andThen(log.settle(record.id, outcome))))
    )
    const fields = await observer.hgetall(key)
    expect(JSON.parse(fields.r ?? "null")).toEqual(record)
    expect(JSON.parse(fields.o ?? "null")).toEqual(outcome)
    expect(await observer.pttl(key)).toBe(-1)
    await stores.runPromise(
      TransactionLog.use((log) => log.discard(record.id).pipe(Effect.andThen(log.settle(record.id, outcome))))
    )
    expect(await observer.exists(key)).toBe(0)
  })

  it("puts the key prefix before every key", async () => {
    const prefixed = ManagedRuntime.make(RedisStores.layer({ url: server.url, keyPrefix: "tenant-a:" }))
    try {
      await prefixed.runPromise(
        RateLimiter.use((limiter) => limiter.consume([{ key: "k", limit: 1, windowMs: 60_000 }], Date.now()))
      )
      expect(await observer.exists("tenant-a:{rate:k}")).toBe(1)
    } finally {
      await prefixed.dispose()
    }
  })

  it("sends a script's source again when Redis has forgotten it (after a restart or SCRIPT FLUSH)", async () => {
    const limit = RateLimiter.use((limiter) =>
      limiter.consume([{ key: "flushed", limit: 10, windowMs: 60_000 }], Date.now())
    )
    await stores.runPromise(limit)
    await observer.script("FLUSH")
    expect(await stores.runPromise(limit)).toEqual({ allowed: true, remaining: 8 })
  })
})
