import { OtpStore, PhoneE164, RateLimiter, UserId, UserStore } from "@walletgate/core"
import { type RedisStorePorts, RedisStores } from "@walletgate/redis"
import { ManagedRuntime } from "effect"
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

  it("keeps a rate-limit window in one hash tagged by its key, until the window ends", async () => {
    const windowMs = 3_600_000
    const now = Date.now()
    const start = now - (now % windowMs)
    await stores.runPromise(RateLimiter.use((limiter) => limiter.consume("otp:send:ip:203.0.113.9", 5, windowMs, now)))
    const key = "walletgate:{rate:otp:send:ip:203.0.113.9}"
    expect(await observer.hgetall(key)).toEqual({ s: String(start), c: "1" })
    const ttl = await observer.pttl(key)
    expect(ttl).toBeGreaterThan(start + windowMs - now - 10_000)
    expect(ttl).toBeLessThanOrEqual(start + windowMs - now)
  })

  it("keeps users forever, under their phone and their id, both in the {users} slot", async () => {
    const user = { id: USER_ID, phone: PHONE, createdAt: 1_700_000_000_123 }
    await stores.runPromise(UserStore.use((store) => store.findOrCreate(user)))
    for (const key of [`walletgate:{users}:phone:${PHONE}`, `walletgate:{users}:id:${USER_ID}`]) {
      expect(JSON.parse((await observer.get(key)) ?? "null")).toEqual(user)
      expect(await observer.pttl(key)).toBe(-1)
    }
  })

  it("puts the key prefix before every key", async () => {
    const prefixed = ManagedRuntime.make(RedisStores.layer({ url: server.url, keyPrefix: "tenant-a:" }))
    try {
      await prefixed.runPromise(RateLimiter.use((limiter) => limiter.consume("k", 1, 60_000, Date.now())))
      expect(await observer.exists("tenant-a:{rate:k}")).toBe(1)
    } finally {
      await prefixed.dispose()
    }
  })

  it("sends a script's source again when Redis has forgotten it (after a restart or SCRIPT FLUSH)", async () => {
    const limit = RateLimiter.use((limiter) => limiter.consume("flushed", 10, 60_000, Date.now()))
    await stores.runPromise(limit)
    await observer.script("FLUSH")
    expect(await stores.runPromise(limit)).toEqual({ allowed: true, remaining: 8 })
  })
})
