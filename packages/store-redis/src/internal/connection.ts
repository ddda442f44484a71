import { createHash, randomBytes } from "node:crypto"
import { StoreUnavailable } from "@walletgate/core/state"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { type Cluster, Redis } from "ioredis"

/**
 * A Lua script, run as a command ioredis defines on the client (`defineCommand`): it sends `EVALSHA`, and the
 * source only when the server has forgotten it (after a restart, a failover or `SCRIPT FLUSH`).
 */
export interface LuaScript {
  /** The command's name on the client: walletgate's prefix and the script's SHA-1, so no two scripts share one. */
  readonly name: string
  readonly lua: string
}

/** Wraps Lua source as a {@link LuaScript}. */
export const luaScript = (lua: string): LuaScript => ({
  name: `walletgate_${createHash("sha1").update(lua).digest("hex")}`,
  lua
})

/** A command `defineCommand` made: the number of keys, the keys, then the arguments. */
type ScriptCommand = (numberOfKeys: number, ...keysAndArgs: ReadonlyArray<string | number>) => Promise<unknown>

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
    command: (client: Redis | Cluster) => Promise<unknown>,
    reply: Schema.Decoder<A>
  ) => Effect.Effect<A, StoreUnavailable>
}

/** Where Redis is: a URL to make a client from, or a client the caller owns. */
export type RedisTarget = { readonly url: string } | { readonly client: Redis | Cluster }

/** Settings of {@link connect}, already checked. */
export interface ConnectSettings {
  readonly target: RedisTarget
  readonly keyPrefix: string
  readonly commandTimeoutMs: number
  readonly connectTimeoutMs: number
}

// Up to 1 s between reconnection attempts, so that a restarted Redis is found again within a second.
const reconnectDelay = (attempt: number): number => Math.min(attempt * 100, 1000)

const reason = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

const evaluate = (
  client: Redis | Cluster,
  script: LuaScript,
  keys: ReadonlyArray<string>,
  args: ReadonlyArray<string | number>
): Promise<unknown> => {
  // `defineCommand` adds the command as a method of the client, under a name no ioredis type can list.
  const commands = client as unknown as Partial<Record<string, ScriptCommand>>
  if (commands[script.name] === undefined) client.defineCommand(script.name, { lua: script.lua })
  const command = commands[script.name]
  if (command === undefined) return Promise.reject(new Error(`ioredis did not define ${script.name}`))
  return command.call(client, keys.length, ...keys, ...args)
}

const waitUntilReady = (client: Redis | Cluster, ms: number): Effect.Effect<boolean> =>
  client.status === "ready"
    ? Effect.succeed(true)
    : Effect.callback<boolean>((resume) => {
        const stop = () => {
          clearTimeout(timer)
          client.off("ready", onReady)
        }
        const onReady = () => {
          stop()
          resume(Effect.succeed(true))
        }
        const timer = setTimeout(() => {
          stop()
          resume(Effect.succeed(false))
        }, ms)
        client.once("ready", onReady)
        return Effect.sync(stop)
      })

const ownClient = (url: string, settings: ConnectSettings) =>
  Effect.acquireRelease(
    Effect.sync(
      () =>
        new Redis(url, {
          connectionName: "walletgate",
          commandTimeout: settings.commandTimeoutMs,
          connectTimeout: settings.connectTimeoutMs,
          // Fail fast instead of queueing while Redis is away: a queued command would run later, after
          // its caller was already told 503, and a resent one could apply twice.
          enableOfflineQueue: false,
          maxRetriesPerRequest: 0,
          autoResendUnfulfilledCommands: false,
          retryStrategy: reconnectDelay
        })
    ),
    (client) =>
      Effect.promise(() => client.quit().catch(() => undefined)).pipe(
        Effect.timeoutOption(settings.commandTimeoutMs),
        Effect.ensuring(Effect.sync(() => client.disconnect()))
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
    const client = "client" in target ? target.client : yield* ownClient(target.url, settings)
    // Connection errors surface as failed calls; without a listener ioredis would print each one.
    const ignore = () => undefined
    client.on("error", ignore)
    if ("client" in target) yield* Effect.addFinalizer(() => Effect.sync(() => client.off("error", ignore)))
    if (!(yield* waitUntilReady(client, settings.connectTimeoutMs))) {
      yield* Effect.logWarning("walletgate: Redis is not reachable yet; state calls answer 503 until it is")
    }

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
        )
      )

    return {
      keyPrefix: settings.keyPrefix,
      run: (operation, script, keys, args, reply) =>
        bounded(operation, () => evaluate(client, script, keys, args), reply),
      send: (operation, command, reply) => bounded(operation, () => command(client), reply)
    }
  })
