import {
  AccountLocks,
  ApiKeyStore,
  AutomationAccounts,
  ClientStore,
  GasLedger,
  IdempotencyStore,
  OrderIndex,
  OtpStore,
  RateLimiter,
  TransactionLog,
  UserStore
} from "@walletgate/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Cluster, Redis } from "ioredis"
import { redisAccountLocks } from "./internal/AccountLocks"
import { redisApiKeyStore } from "./internal/ApiKeyStore"
import { redisAutomationAccounts } from "./internal/AutomationAccounts"
import { redisClientStore } from "./internal/ClientStore"
import { connect, type RedisTarget } from "./internal/connection"
import { redisGasLedger } from "./internal/GasLedger"
import { redisIdempotencyStore } from "./internal/IdempotencyStore"
import { redisOrderIndex } from "./internal/OrderIndex"
import { redisOtpStore } from "./internal/OtpStore"
import { redisRateLimiter } from "./internal/RateLimiter"
import { redisTransactionLog } from "./internal/TransactionLog"
import { redisUserStore } from "./internal/UserStore"

/** How the Redis stores reach Redis and how long they wait for it. */
export interface RedisStoresSettings {
  /** Put before every key; default `walletgate:`. It must not contain `{` or `}` (they choose the cluster slot). */
  readonly keyPrefix?: string
  /** The longest one store call may take, in ms; default 1000. After it the call fails with `StoreUnavailable`. */
  readonly commandTimeoutMs?: number
  /** The longest wait for a connection, in ms; default 1000. The layer waits that long at most at start. */
  readonly connectTimeoutMs?: number
  /**
   * The longest an account lock is waited for while another instance holds it, in ms; default 30000, at
   * most 600000. After it the call fails with `StoreUnavailable` (answered 503).
   */
  readonly lockWaitMs?: number
}

/**
 * Options of {@link RedisStores.layer}: a `url` (`redis://[[user]:password@]host[:port][/db]`, or
 * `rediss://` for TLS), whose client the layer makes and quits; or a `client` (ioredis `Redis` or
 * `Cluster`) that the caller made and keeps owning.
 */
export type RedisStoresOptions = RedisStoresSettings &
  (
    | { readonly url: string; readonly client?: undefined }
    | { readonly client: Redis | Cluster; readonly url?: undefined }
  )

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

const wholeMs = (name: string, value: number, maximum: number): number => {
  if (!Number.isInteger(value) || value < 1 || value > maximum) {
    throw new RangeError(`RedisStores: ${name} must be a whole number of ms from 1 to ${maximum}, got ${value}`)
  }
  return value
}

/** Shared state on Redis (`@walletgate/redis`): every instance of a fleet, or every Lambda, sees the same state. */
export const RedisStores = {
  /**
   * Every state port on one Redis connection (`OtpStore`, `UserStore`, `RateLimiter`, `ClientStore`,
   * `ApiKeyStore`, `AutomationAccounts`, `IdempotencyStore`, `AccountLocks`, `TransactionLog`, `GasLedger`, the sweeper's
   * `OrderIndex`), for example
   * `Layer.mergeAll(embeddedPorts(), RedisStores.layer({ url }))` (a later layer wins, so apps, API keys
   * and automation accounts then come from Redis, not from `embeddedPorts`). Throws a `RangeError` at once
   * for an invalid option. Every call is bounded by `commandTimeoutMs`; an unreachable Redis makes calls
   * fail fast with `StoreUnavailable` (answered 503) and never changes half a record.
   */
  layer: (options: RedisStoresOptions): Layer.Layer<RedisStorePorts> => {
    const keyPrefix = options.keyPrefix ?? "walletgate:"
    if (/[{}]/.test(keyPrefix)) throw new RangeError("RedisStores: keyPrefix must not contain { or }")
    const commandTimeoutMs = wholeMs("commandTimeoutMs", options.commandTimeoutMs ?? 1000, 60_000)
    const connectTimeoutMs = wholeMs("connectTimeoutMs", options.connectTimeoutMs ?? 1000, 60_000)
    const lockWaitMs = wholeMs("lockWaitMs", options.lockWaitMs ?? 30_000, 600_000)
    const target: RedisTarget = options.client === undefined ? { url: options.url } : { client: options.client }
    return Layer.effectContext(
      Effect.gen(function* () {
        const connection = yield* connect({ target, keyPrefix, commandTimeoutMs, connectTimeoutMs })
        return Context.make(OtpStore, redisOtpStore(connection)).pipe(
          Context.add(UserStore, redisUserStore(connection)),
          Context.add(RateLimiter, redisRateLimiter(connection)),
          Context.add(ClientStore, redisClientStore(connection)),
          Context.add(ApiKeyStore, redisApiKeyStore(connection)),
          Context.add(AutomationAccounts, redisAutomationAccounts(connection)),
          Context.add(IdempotencyStore, redisIdempotencyStore(connection)),
          Context.add(AccountLocks, redisAccountLocks(connection, lockWaitMs)),
          Context.add(TransactionLog, redisTransactionLog(connection)),
          Context.add(GasLedger, redisGasLedger(connection)),
          Context.add(OrderIndex, redisOrderIndex(connection))
        )
      })
    )
  }
} as const
