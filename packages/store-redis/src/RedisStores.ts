import { OtpStore, RateLimiter, UserStore } from "@walletgate/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Cluster, Redis } from "ioredis"
import { connect, type RedisTarget } from "./internal/connection"
import { redisOtpStore } from "./internal/OtpStore"
import { redisRateLimiter } from "./internal/RateLimiter"
import { redisUserStore } from "./internal/UserStore"

/** How the Redis stores reach Redis and how long they wait for it. */
export interface RedisStoresSettings {
  /** Put before every key; default `walletgate:`. It must not contain `{` or `}` (they choose the cluster slot). */
  readonly keyPrefix?: string
  /** The longest one store call may take, in ms; default 1000. After it the call fails with `StoreUnavailable`. */
  readonly commandTimeoutMs?: number
  /** The longest wait for a connection, in ms; default 1000. The layer waits that long at most at start. */
  readonly connectTimeoutMs?: number
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

/** The state ports `RedisStores.layer` provides. */
export type RedisStorePorts = OtpStore | UserStore | RateLimiter

const positiveMs = (name: string, value: number): number => {
  if (!Number.isInteger(value) || value < 1 || value > 60_000) {
    throw new RangeError(`RedisStores: ${name} must be a whole number of ms from 1 to 60000, got ${value}`)
  }
  return value
}

/** Shared state on Redis (`@walletgate/redis`): every instance of a fleet, or every Lambda, sees the same codes, users and limits. */
export const RedisStores = {
  /**
   * `OtpStore`, `UserStore` and `RateLimiter` on one Redis connection, for example
   * `Layer.mergeAll(embeddedPorts(), RedisStores.layer({ url }))` (a later layer wins). Throws a
   * `RangeError` at once for an invalid option. Every call is bounded by `commandTimeoutMs`; an unreachable
   * Redis makes calls fail fast with `StoreUnavailable` (answered 503) and never changes half a record.
   */
  layer: (options: RedisStoresOptions): Layer.Layer<RedisStorePorts> => {
    const keyPrefix = options.keyPrefix ?? "walletgate:"
    if (/[{}]/.test(keyPrefix)) throw new RangeError("RedisStores: keyPrefix must not contain { or }")
    const commandTimeoutMs = positiveMs("commandTimeoutMs", options.commandTimeoutMs ?? 1000)
    const connectTimeoutMs = positiveMs("connectTimeoutMs", options.connectTimeoutMs ?? 1000)
    const target: RedisTarget = options.client === undefined ? { url: options.url } : { client: options.client }
    return Layer.effectContext(
      Effect.gen(function* () {
        const connection = yield* connect({ target, keyPrefix, commandTimeoutMs, connectTimeoutMs })
        return Context.make(OtpStore, redisOtpStore(connection)).pipe(
          Context.add(UserStore, redisUserStore(connection)),
          Context.add(RateLimiter, redisRateLimiter(connection))
        )
      })
    )
  }
} as const
