import { randomBytes } from "node:crypto"
import { getHeapStatistics, setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import {
  AccountLocks,
  ApiKeyStore,
  AutomationAccounts,
  ClientStore,
  GasLedger,
  IdempotencyStore,
  OrderIndex,
  OtpStore,
  PhoneE164,
  RateLimiter,
  TransactionLog,
  UserStore
} from "@walletgate/core"
import { AuditLog } from "@walletgate/core/operator"
import {
  accountLocksContract,
  apiKeyStoreContract,
  auditLogContract,
  automationAccountsContract,
  clientStoreContract,
  gasLedgerContract,
  idempotencyStoreContract,
  orderIndexContract,
  otpStoreContract,
  type PortContractCase,
  rateLimiterContract,
  transactionLogContract,
  userStoreContract
} from "@walletgate/core/testing"
import { Effect, type Layer } from "effect"
import { describe, expect, it } from "vitest"

// The in-memory ports against the port contracts; @walletgate/redis runs the same cases on Redis. The
// in-memory locks skip `expiringAccountLocksContract`: their holders die only with the whole process.
const suite = <R>(port: string, cases: ReadonlyArray<PortContractCase<R>>, layer: Layer.Layer<R>) =>
  describe(port, () => {
    for (const { name, run } of cases) it(name, () => Effect.runPromise(Effect.provide(run, layer)))
  })

suite("OtpStore.memory", otpStoreContract, OtpStore.memory)
suite("UserStore.memory", userStoreContract, UserStore.memory)
suite("RateLimiter.memory", rateLimiterContract, RateLimiter.memory)
suite("ClientStore.memory", clientStoreContract, ClientStore.memory())
suite("ApiKeyStore.memory", apiKeyStoreContract, ApiKeyStore.memory())
suite("AutomationAccounts.memory", automationAccountsContract, AutomationAccounts.memory())
suite("IdempotencyStore.memory", idempotencyStoreContract, IdempotencyStore.memory)
suite("AccountLocks.memory", accountLocksContract, AccountLocks.memory)
suite("TransactionLog.memory", transactionLogContract, TransactionLog.memory)
suite("GasLedger.memory", gasLedgerContract, GasLedger.memory)
suite("OrderIndex.memory", orderIndexContract, OrderIndex.memory)
suite("AuditLog.memory", auditLogContract, AuditLog.memory())

// Whether a record is still held shows only in memory: a WeakRef to something it holds and a full collection tell.
setFlagsFromString("--expose-gc")
const collectGarbage = runInNewContext("gc") as () => void
const collected = async () => {
  // A WeakRef keeps its target until the job that made it ends.
  await new Promise((resolve) => setTimeout(resolve, 0))
  collectGarbage()
}
const heldAfterCollection = async (held: WeakRef<object>) => {
  await collected()
  return held.deref() !== undefined
}

describe("OtpStore.memory over a long life", () => {
  it("forgets a code once it no longer matters, as other codes are issued, and keeps live ones", async () => {
    const store = Effect.runSync(Effect.provide(Effect.service(OtpStore), OtpStore.memory))
    const phone = (n: number) => PhoneE164.make(`+1415555${String(n).padStart(4, "0")}`)
    const issue = (n: number, now: number) => {
      const code = { codeHash: "ab".repeat(32), expiresAt: now + 300_000, resendAt: now + 60_000 }
      Effect.runSync(store.issue(phone(n), code, now))
      return new WeakRef(code)
    }
    const first = issue(0, 0)
    issue(1, 299_999)
    expect(await heldAfterCollection(first)).toBe(true)
    issue(2, 300_000)
    expect(await heldAfterCollection(first)).toBe(false)
    // The forgotten phone is as if it never had a code; the others still have theirs.
    expect(Effect.runSync(store.consume(phone(0), "ab".repeat(32), 300_000, 5))).toBe("Rejected")
    expect(Effect.runSync(store.consume(phone(1), "ab".repeat(32), 300_000, 5))).toBe("Accepted")
  })
})

describe("RateLimiter.memory over a long life", () => {
  it("forgets ended windows a few per call, until none is left", async () => {
    const limiter = Effect.runSync(Effect.provide(Effect.service(RateLimiter), RateLimiter.memory))
    const hour = 3_600_000
    const heap = () => getHeapStatistics().used_heap_size
    await collected()
    const before = heap()
    // 1 000 keys of 20 000 characters each: 20 MB held by the windows of the first hour.
    for (let n = 0; n < 1_000; n++)
      Effect.runSync(limiter.consume([{ key: randomBytes(10_000).toString("hex"), limit: 5, windowMs: hour }], n))
    await collected()
    expect(heap() - before).toBeGreaterThan(15_000_000)
    // In the next hour, calls on one key forget the ended windows a few at a time (at most 8 per call): after 60
    // calls, about half of them.
    for (let n = 0; n < 60; n++) Effect.runSync(limiter.consume([{ key: "k", limit: 5, windowMs: hour }], hour + n))
    await collected()
    expect(heap() - before).toBeGreaterThan(8_000_000)
    expect(heap() - before).toBeLessThan(12_000_000)
    for (let n = 60; n < 200; n++) Effect.runSync(limiter.consume([{ key: "k", limit: 5, windowMs: hour }], hour + n))
    await collected()
    expect(heap() - before).toBeLessThan(1_000_000)
  })
})

describe("IdempotencyStore.memory over a long life", () => {
  it("forgets expired records as new keys are claimed, and keeps live ones", async () => {
    const store = Effect.runSync(Effect.provide(Effect.service(IdempotencyStore), IdempotencyStore.memory))
    const ttlMs = 1_000
    const kept = (() => {
      const claimed = Effect.runSync(store.claim("old", "fingerprint", 0, ttlMs))
      if (claimed._tag !== "Claimed") throw new Error("a fresh key is claimed")
      const body = { padding: "x".repeat(10_000) }
      Effect.runSync(store.complete("old", claimed.owner, { status: 200, body }, 0, ttlMs))
      return new WeakRef(body)
    })()
    Effect.runSync(store.claim("while-live", "fingerprint", ttlMs - 1, ttlMs))
    expect(await heldAfterCollection(kept)).toBe(true)
    Effect.runSync(store.claim("after-expiry", "fingerprint", ttlMs, ttlMs))
    expect(await heldAfterCollection(kept)).toBe(false)
  })
})
