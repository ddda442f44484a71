import { type IdempotencyClaim, IdempotencyStore, type StoredReply } from "@walletgate/core"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type Connection, lifetimeMs, luaScript, ownerToken } from "./connection"

// One hash per key, `{idem:<scope>:<key>}`: f = request fingerprint, o = owner token of the claim,
// e = expires at, d = the answer as JSON (once completed). Expiry is decided by `e` against the caller's
// clock, as in IdempotencyStore.memory; PEXPIRE (relative) only lets Redis drop the record afterwards.

const claim = luaScript(`
local record = redis.call("HMGET", KEYS[1], "f", "e", "d")
local expiresAt = tonumber(record[2])
if not expiresAt or expiresAt <= tonumber(ARGV[3]) then
  redis.call("DEL", KEYS[1])
  redis.call("HSET", KEYS[1], "f", ARGV[1], "o", ARGV[2], "e", ARGV[4])
  redis.call("PEXPIRE", KEYS[1], ARGV[5])
  return {"Claimed"}
end
if record[1] ~= ARGV[1] then return {"Mismatch"} end
if record[3] then return {"Completed", record[3]} end
return {"InFlight"}
`)

const complete = luaScript(`
local record = redis.call("HMGET", KEYS[1], "o", "e")
local expiresAt = tonumber(record[2])
if record[1] ~= ARGV[1] or not expiresAt or expiresAt <= tonumber(ARGV[3]) then return 0 end
redis.call("HSET", KEYS[1], "d", ARGV[2], "e", ARGV[4])
redis.call("PEXPIRE", KEYS[1], ARGV[5])
return 1
`)

const release = luaScript(`
local record = redis.call("HMGET", KEYS[1], "o", "d")
if record[1] == ARGV[1] and not record[2] then return redis.call("DEL", KEYS[1]) end
return 0
`)

// `body` may be absent from the JSON: an answer without a body (`undefined`) is stored without the key.
const ReplyJson = Schema.fromJsonString(Schema.Struct({ status: Schema.Int, body: Schema.optionalKey(Schema.Unknown) }))
const encodeReply = Schema.encodeSync(ReplyJson)

const ClaimReply = Schema.Union([
  Schema.Tuple([Schema.Literals(["Claimed", "InFlight", "Mismatch"])]),
  Schema.Tuple([Schema.Literal("Completed"), ReplyJson])
])

/** `IdempotencyStore` on Redis: claim, complete and release are each one script on the key's hash. */
export const redisIdempotencyStore = (connection: Connection): IdempotencyStore["Service"] => {
  const hashKey = (key: string) => `${connection.keyPrefix}{idem:${key}}`
  return IdempotencyStore.of({
    claim: (key, fingerprint, now, ttlMs) =>
      Effect.suspend(() => {
        const owner = ownerToken()
        return connection
          .run(
            "IdempotencyStore.claim",
            claim,
            [hashKey(key)],
            [fingerprint, owner, now, now + ttlMs, lifetimeMs(ttlMs)],
            ClaimReply
          )
          .pipe(
            Effect.map((reply): IdempotencyClaim => {
              if (reply[0] === "Completed") {
                const stored: StoredReply = { status: reply[1].status, body: reply[1].body }
                return { _tag: "Completed", reply: stored }
              }
              return reply[0] === "Claimed" ? { _tag: "Claimed", owner } : { _tag: reply[0] }
            })
          )
      }),
    complete: (key, owner, reply, now, ttlMs) =>
      Effect.suspend(() =>
        connection.run(
          "IdempotencyStore.complete",
          complete,
          [hashKey(key)],
          [owner, encodeReply(reply), now, now + ttlMs, lifetimeMs(ttlMs)],
          Schema.Number
        )
      ).pipe(Effect.asVoid),
    release: (key, owner) =>
      connection.run("IdempotencyStore.release", release, [hashKey(key)], [owner], Schema.Number).pipe(Effect.asVoid)
  })
}
