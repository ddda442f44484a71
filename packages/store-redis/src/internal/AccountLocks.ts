import { AccountLocks, type HeldLock, StoreUnavailable } from "@walletgate/core/state"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type Connection, lifetimeMs, luaScript, ownerToken } from "./connection"

// One string per lock, `{lock:<key>}`, holding the owner token of its holder, with the holder's ttl:
// a holder that dies (a crashed instance, a frozen Lambda) frees the lock when its ttl ends.

// Compare-and-delete: a holder whose ttl ended must not free the lock of whoever took it next.
const release = luaScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end
return 0
`)

/** Waits between tries to take a held lock: 10 ms, then doubling up to 50 ms. */
const backoffMs = (attempt: number): number => Math.min(10 * 2 ** attempt, 50)

/**
 * `AccountLocks` on Redis: `SET NX PX` with a random owner token, retried with a short backoff while
 * another holds the lock, for at most `lockWaitMs`; then `StoreUnavailable` ("account lock wait").
 */
export const redisAccountLocks = (connection: Connection, lockWaitMs: number): AccountLocks["Service"] => {
  const lockKey = (key: string) => `${connection.keyPrefix}{lock:${key}}`

  const free = (key: string, owner: string) =>
    connection.run("AccountLocks.release", release, [lockKey(key)], [owner], Schema.Number).pipe(
      Effect.catchTag("StoreUnavailable", () =>
        Effect.logWarning("walletgate: an account lock was not released; it frees itself when its ttl ends")
      ),
      Effect.asVoid
    )

  const take = (key: string, owner: string, ttlMs: number) =>
    connection
      .send(
        "AccountLocks.acquire",
        (client) => client.set(lockKey(key), owner, "PX", lifetimeMs(ttlMs), "NX"),
        Schema.NullOr(Schema.Literal("OK"))
      )
      .pipe(Effect.map((reply) => reply === "OK"))

  return AccountLocks.of({
    acquire: (key, ttlMs) =>
      Effect.suspend(() => {
        const owner = ownerToken()
        let released = false
        const held: HeldLock = {
          owner,
          release: Effect.suspend(() => {
            if (released) return Effect.void
            released = true
            return free(key, owner)
          })
        }
        return Effect.gen(function* () {
          const deadline = (yield* Clock.currentTimeMillis) + lockWaitMs
          for (let attempt = 0; ; attempt++) {
            if (yield* take(key, owner, ttlMs)) return held
            const now = yield* Clock.currentTimeMillis
            if (now >= deadline) {
              yield* Effect.logWarning("walletgate: gave up waiting for an account lock").pipe(
                Effect.annotateLogs({ waitedMs: lockWaitMs })
              )
              return yield* new StoreUnavailable({ operation: "account lock wait" })
            }
            yield* Effect.sleep(Math.min(backoffMs(attempt), deadline - now))
          }
        }).pipe(
          // Interrupted while a SET may be on its way: delete the lock if it was taken. Both commands go
          // over one connection, in order, so the release never overtakes the SET.
          Effect.onInterrupt(() => held.release)
        )
      })
  })
}
