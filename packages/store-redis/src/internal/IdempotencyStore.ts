import { type IdempotencyClaim, IdempotencyStore, type StoredReply } from "@walletgate/core/state"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type Connection, lifetimeMs, luaScript, ownerToken } from "./connection"

// One hash per key, `{idem:<scope>:<key>}`: f = request fingerprint, o = owner token of the claim,
// e = expires at, l = the claim's lease ends at, i = the linked operation as JSON (once linked), d = the
// answer as JSON (once completed). Expiry is decided by `e` against the caller's clock, as in
// IdempotencyStore.memory; PEXPIRE (relative) only lets Redis drop the record afterwards.

const claim = luaScript(`
local record = redis.call("HMGET", KEYS[1], "f", "e", "d", "i", "l", "o")
local now = tonumber(ARGV[3])
local expiresAt = tonumber(record[2])
if not expiresAt or expiresAt <= now then
  redis.call("DEL", KEYS[1])
  redis.call("HSET", KEYS[1], "f", ARGV[1], "o", ARGV[2], "e", ARGV[4], "l", ARGV[4])
  redis.call("PEXPIRE", KEYS[1], ARGV[5])
  return {"Claimed"}
end
if record[1] ~= ARGV[1] then return {"Mismatch"} end
if record[3] then return {"Completed", record[3]} end
if record[4] then
  local running = "0"
  if tonumber(record[5]) and tonumber(record[5]) > now then running = "1" end
  return {"Linked", record[4], record[6], running}
end
return {"InFlight"}
`)

// Linked again to the same record (ARGV[6], its id), the operation's hash is replaced (it was signed again).
const link = luaScript(`
local record = redis.call("HMGET", KEYS[1], "o", "e", "d", "i")
local expiresAt = tonumber(record[2])
if record[1] ~= ARGV[1] or not expiresAt or expiresAt <= tonumber(ARGV[3]) or record[3] then return 0 end
if record[4] and cjson.decode(record[4]).id ~= ARGV[6] then return 0 end
redis.call("HSET", KEYS[1], "i", ARGV[2], "e", ARGV[4])
redis.call("PEXPIRE", KEYS[1], ARGV[5])
return 1
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

const OperationJson = Schema.fromJsonString(Schema.Struct({ id: Schema.String, txHash: Schema.String }))
const encodeOperation = Schema.encodeSync(OperationJson)

const ClaimReply = Schema.Union([
  Schema.Tuple([Schema.Literals(["Claimed", "InFlight", "Mismatch"])]),
  Schema.Tuple([Schema.Literal("Completed"), ReplyJson]),
  Schema.Tuple([Schema.Literal("Linked"), OperationJson, Schema.String, Schema.Literals(["0", "1"])])
])

/** `IdempotencyStore` on Redis: claim, link, complete and release are each one script on the key's hash. */
export const redisIdempotencyStore = (connection: Connection): IdempotencyStore["Service"] => {
  const hashKey = (key: string) => `${connection.keyPrefix}{idem:${key}}`
  return IdempotencyStore.of({
    claim: (key, fingerprint, now, leaseMs) =>
      Effect.suspend(() => {
        const owner = ownerToken()
        return connection
          .run(
            "IdempotencyStore.claim",
            claim,
            [hashKey(key)],
            [fingerprint, owner, now, now + leaseMs, lifetimeMs(leaseMs)],
            ClaimReply
          )
          .pipe(
            Effect.map((reply): IdempotencyClaim => {
              switch (reply[0]) {
                case "Completed": {
                  const stored: StoredReply = { status: reply[1].status, body: reply[1].body }
                  return { _tag: "Completed", reply: stored }
                }
                case "Linked":
                  return {
                    _tag: "Linked",
                    operation: { id: reply[1].id, txHash: reply[1].txHash },
                    owner: reply[2],
                    running: reply[3] === "1"
                  }
                case "Claimed":
                  return { _tag: "Claimed", owner }
                default:
                  return { _tag: reply[0] }
              }
            })
          )
      }),
    link: (key, owner, operation, now, ttlMs) =>
      Effect.suspend(() =>
        connection.run(
          "IdempotencyStore.link",
          link,
          [hashKey(key)],
          [
            owner,
            encodeOperation({ id: operation.id, txHash: operation.txHash }),
            now,
            now + ttlMs,
            lifetimeMs(ttlMs),
            operation.id
          ],
          Schema.Number
        )
      ).pipe(Effect.map((linked) => linked === 1)),
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
