import type { ClientStore } from "@walletgate/core/auth"
import type { AuditLog } from "@walletgate/core/operator"
import type { OtpStore, UserStore } from "@walletgate/core/otp"
import type { ApiKeyStore, AutomationAccounts } from "@walletgate/core/payout"
import type { AccountLocks, GasLedger, IdempotencyStore, RateLimiter, TransactionLog } from "@walletgate/core/state"
import type { OrderIndex } from "@walletgate/core/sweeper"
import * as Layer from "effect/Layer"
import { RedisConnection, type RedisStoresOptions } from "./RedisConnection"
import { RedisAccountLocks } from "./stores/AccountLocks"
import { RedisApiKeyStore } from "./stores/ApiKeyStore"
import { RedisAuditLog } from "./stores/AuditLog"
import { RedisAutomationAccounts } from "./stores/AutomationAccounts"
import { RedisClientStore } from "./stores/ClientStore"
import { RedisGasLedger } from "./stores/GasLedger"
import { RedisIdempotencyStore } from "./stores/IdempotencyStore"
import { RedisOrderIndex } from "./stores/OrderIndex"
import { RedisSignInStores } from "./stores/signIn"
import { RedisTransactionLog } from "./stores/TransactionLog"

/** The state ports `RedisStores.layer` provides: every state port of a gateway. */
export type RedisStorePorts =
  | OtpStore
  | UserStore
  | RateLimiter
  | ClientStore
  | ApiKeyStore
  | AutomationAccounts
  | IdempotencyStore
  | AccountLocks
  | TransactionLog
  | GasLedger
  | OrderIndex
  | AuditLog

/** Shared state on Redis (`@walletgate/redis`): every instance of a fleet, or every Lambda, sees the same state. */
export const RedisStores = {
  /**
   * Every state port on one Redis connection (`OtpStore`, `UserStore`, `RateLimiter`, `ClientStore`,
   * `ApiKeyStore`, `AutomationAccounts`, `IdempotencyStore`, `AccountLocks`, `TransactionLog`, `GasLedger`, the sweeper's
   * `OrderIndex`, the operators' `AuditLog`), for example
   * `Layer.mergeAll(embeddedPorts(), RedisStores.layer({ url }))` (a later layer wins, so apps, API keys
   * and automation accounts then come from Redis, not from `embeddedPorts`). Throws a `RangeError` at once
   * for an invalid option. Every call is bounded by `commandTimeoutMs`; an unreachable Redis makes calls
   * fail fast with `StoreUnavailable` (answered 503) and never changes half a record. A function that needs fewer
   * stores provides {@link RedisConnection.layer} under only those (`RedisSignInStores`, `RedisOtpStore`, …), and
   * bundles no other.
   */
  layer: (options: RedisStoresOptions): Layer.Layer<RedisStorePorts> =>
    Layer.mergeAll(
      RedisSignInStores,
      RedisClientStore,
      RedisApiKeyStore,
      RedisAutomationAccounts,
      RedisIdempotencyStore,
      RedisAccountLocks,
      RedisTransactionLog,
      RedisGasLedger,
      RedisOrderIndex,
      RedisAuditLog
    ).pipe(Layer.provide(RedisConnection.layer(options)))
} as const
