import { createHash, randomBytes } from "node:crypto"
import type { ConnectionOptions } from "node:tls"
import { StoreUnavailable } from "@walletgate/core/state"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { openRedis, type RedisAddress, type RedisClient } from "./client"

/**
 * A Lua script, run by its SHA-1 (`EVALSHA`), its source sent (`EVAL`) only when the server has forgotten it (after
 * a restart, a failover or `SCRIPT FLUSH`).
 */
export interface LuaScript {
  /** The SHA-1 of the source, in hex, as Redis names the script. */
  readonly sha: string
  readonly lua: string
}

/** Wraps Lua source as a {@link LuaScript}. */
export const luaScript = (lua: string): LuaScript => ({ sha: createHash("sha1").update(lua).digest("hex"), lua })

/** A fresh owner token (of an idempotency claim, of a lock): 128 random bits, so that no two holders share one. */
export const ownerToken = (): string => randomBytes(16).toString("hex")

/** A record's lifetime for `PEXPIRE` or `SET … PX`: a whole number of ms, at least 1. */
export const lifetimeMs = (ttlMs: number): number => Math.max(1, Math.ceil(ttlMs))

/** What the stores share: the client, the key prefix and the bounded way to call Redis. */
export interface Connection {
  readonly keyPrefix: string
  /**
   * Runs `script` atomically on the slot of `keys` and decodes its reply; any failure, timeout or
   * unexpected reply is `StoreUnavailable`.
   */
  readonly run: <A>(
    operation: string,
    script: LuaScript,
    keys: ReadonlyArray<string>,
    args: ReadonlyArray<string | number>,
    reply: Schema.Decoder<A>
  ) => Effect.Effect<A, StoreUnavailable>
  /** Sends one plain command and decodes its reply, as {@link Connection.run} does. */
  readonly send: <A>(
    operation: string,
    command: (commands: Commands) => Promise<unknown>,
    reply: Schema.Decoder<A>
  ) => Effect.Effect<A, StoreUnavailable>
}

/**
 * Where Redis is: the address of a URL to make a client from (with extra TLS options for `rediss://`), or a client the caller
 * made and owns (ioredis's `Redis` or `Cluster` fits {@link RedisClient}).
 */
export type RedisTarget =
  | { readonly address: RedisAddress; readonly tls?: ConnectionOptions | undefined }
  | { readonly client: RedisClient }

/** Settings of {@link connect}, already checked. */
export interface ConnectSettings {
  readonly target: RedisTarget
  readonly keyPrefix: string
  readonly commandTimeoutMs: number
  readonly connectTimeoutMs: number
}

/** The commands the stores send, each resolving to Redis's reply as is, except `hgetall`'s (a record). */
interface Commands {
  get(key: string): Promise<unknown>
  set(key: string, value: string, ...options: Array<string | number>): Promise<unknown>
  del(key: string): Promise<unknown>
  hmget(key: string, ...fields: Array<string>): Promise<unknown>
  hgetall(key: string): Promise<Record<string, string>>
  hvals(key: string): Promise<unknown>
  lrange(key: string, start: number, stop: number): Promise<unknown>
  sadd(key: string, ...members: Array<string>): Promise<unknown>
  smembers(key: string): Promise<unknown>
  srem(key: string, ...members: Array<string>): Promise<unknown>
  zrem(key: string, ...members: Array<string>): Promise<unknown>
  zrevrangebyscore(
    key: string,
    max: number | string,
    min: number | string,
    ...options: Array<string | number>
  ): Promise<unknown>
}

const reason = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

// Upper-case names: ioredis then sends the command as is, without the reply transformers it keys by lower-case
// name (which would turn HGETALL's field-value list into an object for its clients only).
const commandsOf = (client: RedisClient): Commands => ({
  get: (key) => client.call("GET", key),
  set: (key, value, ...options) => client.call("SET", key, value, ...options),
  del: (key) => client.call("DEL", key),
  hmget: (key, ...fields) => client.call("HMGET", key, ...fields),
  hgetall: (key) =>
    client.call("HGETALL", key).then((reply) => {
      if (!Array.isArray(reply) || reply.length % 2 !== 0) throw new Error("HGETALL did not answer field-value pairs")
      const fields: Record<string, string> = {}
      for (let i = 0; i < reply.length; i += 2) fields[String(reply[i])] = String(reply[i + 1])
      return fields
    }),
  hvals: (key) => client.call("HVALS", key),
  lrange: (key, start, stop) => client.call("LRANGE", key, start, stop),
  sadd: (key, ...members) => client.call("SADD", key, ...members),
  smembers: (key) => client.call("SMEMBERS", key),
  srem: (key, ...members) => client.call("SREM", key, ...members),
  zrem: (key, ...members) => client.call("ZREM", key, ...members),
  zrevrangebyscore: (key, max, min, ...options) => client.call("ZREVRANGEBYSCORE", key, max, min, ...options)
})

// A Redis error reply starts with its code (RESP: "the first word … is the error prefix").
const isNoScript = (error: unknown): boolean => error instanceof Error && error.message.startsWith("NOSCRIPT")

const evaluate = (
  client: RedisClient,
  script: LuaScript,
  keys: ReadonlyArray<string>,
  args: ReadonlyArray<string | number>
): Promise<unknown> =>
  client
    .call("EVALSHA", script.sha, keys.length, ...keys, ...args)
    .catch((error: unknown) =>
      isNoScript(error) ? client.call("EVAL", script.lua, keys.length, ...keys, ...args) : Promise.reject(error)
    )

const ownClient = (address: RedisAddress, tls: ConnectionOptions | undefined, settings: ConnectSettings) =>
  Effect.acquireRelease(
    Effect.sync(() => openRedis({ address, tls, connectTimeoutMs: settings.connectTimeoutMs, name: "walletgate" })),
    (client) => Effect.promise(() => client.quit(settings.commandTimeoutMs))
  ).pipe(
    Effect.tap((client) =>
      Effect.promise(() => client.ready(settings.connectTimeoutMs)).pipe(
        Effect.flatMap((connected) =>
          connected
            ? Effect.void
            : Effect.logWarning("walletgate: Redis is not reachable yet; state calls answer 503 until it is")
        )
      )
    )
  )

/**
 * The shared connection of the Redis stores: the caller's client, or one made from `url` and quit when
 * the scope closes. Waits up to `connectTimeoutMs` for Redis at start, but starts without it: until it
 * answers, every call fails fast with `StoreUnavailable`.
 */
export const connect = (settings: ConnectSettings): Effect.Effect<Connection, never, Scope.Scope> =>
  Effect.gen(function* () {
    const { target } = settings
    const client = "client" in target ? target.client : yield* ownClient(target.address, target.tls, settings)
    const commands = commandsOf(client)

    const bounded = <A>(
      operation: string,
      call: () => Promise<unknown>,
      reply: Schema.Decoder<A>
    ): Effect.Effect<A, StoreUnavailable> =>
      Effect.tryPromise({ try: call, catch: reason }).pipe(
        Effect.timeoutOrElse({
          duration: settings.commandTimeoutMs,
          orElse: () => Effect.fail(`no answer within ${settings.commandTimeoutMs} ms`)
        }),
        Effect.flatMap((value) =>
          Schema.decodeUnknownEffect(reply)(value).pipe(
            Effect.mapError((error) => `unexpected reply: ${error.message}`)
          )
        ),
        Effect.catch((why) =>
          Effect.logWarning("walletgate: Redis call failed").pipe(
            Effect.annotateLogs({ operation, reason: why }),
            Effect.andThen(Effect.fail(new StoreUnavailable({ operation })))
          )
        ),
        // Named by the store's operation, never by a key (keys hold phones, client ids and hashes).
        Effect.withSpan(operation, {
          kind: "client",
          attributes: { "db.system": "redis", "db.system.name": "redis", "db.operation.name": operation }
        })
      )

    return {
      keyPrefix: settings.keyPrefix,
      run: (operation, script, keys, args, reply) =>
        bounded(operation, () => evaluate(client, script, keys, args), reply),
      send: (operation, command, reply) => bounded(operation, () => command(commands), reply)
    }
  })
