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
import { describe, it } from "vitest"

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
