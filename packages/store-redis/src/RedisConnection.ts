import type { ConnectionOptions } from "node:tls"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { parseRedisUrl, type RedisClient } from "./internal/client"
import { type Connection, connect, type RedisTarget } from "./internal/connection"

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
  /** How long operators' audit entries are kept, in ms; default 90 days, at most ten years. */
  readonly auditRetentionMs?: number
}

/**
 * Options of {@link RedisConnection.layer} (and of `RedisStores.layer`): a `url`
 * (`redis://[[user]:password@]host[:port][/db]`, or `rediss://` for TLS, with `tls` for extra TLS options such as a
 * private `ca`), whose connection the layer opens and quits; or a `client` the caller made and keeps owning: anything
 * with ioredis's `call(command, ...args)`, such as an ioredis `Redis` or `Cluster`.
 */
export type RedisStoresOptions = RedisStoresSettings &
  (
    | { readonly url: string; readonly tls?: ConnectionOptions; readonly client?: undefined }
    | { readonly client: RedisClient; readonly url?: undefined; readonly tls?: undefined }
  )

const wholeMs = (name: string, value: number, maximum: number): number => {
  if (!Number.isInteger(value) || value < 1 || value > maximum) {
    throw new RangeError(`RedisStores: ${name} must be a whole number of ms from 1 to ${maximum}, got ${value}`)
  }
  return value
}

/**
 * The one Redis connection the stores share (`@walletgate/redis`): provide it once under any of the store layers
 * (`RedisSignInStores`, `RedisOtpStore`, …), which then share its client, key prefix and time limits.
 */
export class RedisConnection extends Context.Service<
  RedisConnection,
  {
    /** The bounded way to call Redis, under the key prefix. */
    readonly connection: Connection
    /** The longest an account lock is waited for, in ms (checked). */
    readonly lockWaitMs: number
    /** How long audit entries are kept, in ms (checked); the audit log's default when absent. */
    readonly auditRetentionMs: number | undefined
  }
>()("@walletgate/redis/RedisConnection") {
  /**
   * Connects to Redis (waiting `connectTimeoutMs` at most; an unreachable Redis then makes each call fail fast with
   * `StoreUnavailable`), and quits the client it made when the layer is released. Throws a `RangeError` at once for
   * an invalid option.
   */
  static readonly layer = (options: RedisStoresOptions): Layer.Layer<RedisConnection> => {
    const keyPrefix = options.keyPrefix ?? "walletgate:"
    if (/[{}]/.test(keyPrefix)) throw new RangeError("RedisStores: keyPrefix must not contain { or }")
    const commandTimeoutMs = wholeMs("commandTimeoutMs", options.commandTimeoutMs ?? 1000, 60_000)
    const connectTimeoutMs = wholeMs("connectTimeoutMs", options.connectTimeoutMs ?? 1000, 60_000)
    const lockWaitMs = wholeMs("lockWaitMs", options.lockWaitMs ?? 30_000, 600_000)
    const auditRetentionMs =
      options.auditRetentionMs === undefined
        ? undefined
        : wholeMs("auditRetentionMs", options.auditRetentionMs, 3650 * 86_400_000)
    const target: RedisTarget =
      options.client === undefined
        ? { address: parseRedisUrl(options.url), tls: options.tls }
        : { client: options.client }
    return Layer.effect(
      RedisConnection,
      Effect.map(connect({ target, keyPrefix, commandTimeoutMs, connectTimeoutMs }), (connection) => ({
        connection,
        lockWaitMs,
        auditRetentionMs
      }))
    )
  }
}
