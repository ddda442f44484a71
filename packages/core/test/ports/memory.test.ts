import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import {
  AccountLocks,
  ApiKeyStore,
  AutomationAccounts,
  ClientStore,
  IdempotencyStore,
  OtpStore,
  RateLimiter,
  TransactionLog,
  UserStore
} from "@walletgate/core"
import {
  accountLocksContract,
  apiKeyStoreContract,
  automationAccountsContract,
  clientStoreContract,
  idempotencyStoreContract,
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

describe("IdempotencyStore.memory over a long life", () => {
  // Whether a record is still held shows only in memory: a WeakRef to its reply and a full collection tell.
  setFlagsFromString("--expose-gc")
  const collectGarbage = runInNewContext("gc") as () => void
  const heldAfterCollection = async (reply: WeakRef<object>) => {
    // A WeakRef keeps its target until the job that made it ends.
    await new Promise((resolve) => setTimeout(resolve, 0))
    collectGarbage()
    return reply.deref() !== undefined
  }

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
