import { ApiKeyRecord, ApiKeyStore } from "@walletgate/core/payout"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type Connection, luaScript } from "./connection"

// Every key in one hash, `{apikeys}`, so that listing them is one command on one slot: field `k:<id>` is
// the record as JSON without its last use and revocation, which are fields of their own (`u:<id>`,
// `r:<id>`, epoch ms) so that touch and revoke change one field each and never rewrite the record.
// Thousands of keys are a few hundred KB.

const save = luaScript(`
redis.call("HSET", KEYS[1], "k:" .. ARGV[1], ARGV[2])
redis.call("HDEL", KEYS[1], "u:" .. ARGV[1], "r:" .. ARGV[1])
if ARGV[3] ~= "" then redis.call("HSET", KEYS[1], "u:" .. ARGV[1], ARGV[3]) end
if ARGV[4] ~= "" then redis.call("HSET", KEYS[1], "r:" .. ARGV[1], ARGV[4]) end
return 1
`)

const touch = luaScript(`
if redis.call("HEXISTS", KEYS[1], "k:" .. ARGV[1]) == 0 then return 0 end
redis.call("HSET", KEYS[1], "u:" .. ARGV[1], ARGV[2])
return 1
`)

// A key is revoked once: the first revocation time stays.
const revoke = luaScript(`
if redis.call("HEXISTS", KEYS[1], "k:" .. ARGV[1]) == 0 then return 0 end
return redis.call("HSETNX", KEYS[1], "r:" .. ARGV[1], ARGV[2])
`)

const RecordJson = Schema.fromJsonString(ApiKeyRecord)
const encodeRecord = Schema.encodeSync(RecordJson)
const Instant = Schema.NullOr(Schema.FiniteFromString)
/** A key's three fields as read: the record, its last use and its revocation (null when absent). */
const StoredKey = Schema.Tuple([RecordJson, Instant, Instant])
type StoredKey = typeof StoredKey.Type

const recordOf = ([record, lastUsedAt, revokedAt]: StoredKey): ApiKeyRecord => {
  const { lastUsedAt: _used, revokedAt: _revoked, ...fixed } = record
  return {
    ...fixed,
    ...(lastUsedAt === null ? {} : { lastUsedAt }),
    ...(revokedAt === null ? {} : { revokedAt })
  }
}

/** Groups the fields of the `{apikeys}` hash by key id, as `[record, last use, revocation]`. */
const groupById = (fields: Record<string, string>): Array<[string, string | null, string | null]> =>
  Object.keys(fields)
    .filter((field) => field.startsWith("k:"))
    .map((field) => {
      const id = field.slice(2)
      return [fields[field] ?? "", fields[`u:${id}`] ?? null, fields[`r:${id}`] ?? null]
    })

/** `ApiKeyStore` on Redis: records are checked against `ApiKeyRecord` when read; touch and revoke are atomic. */
export const redisApiKeyStore = (connection: Connection): ApiKeyStore["Service"] => {
  const hashKey = `${connection.keyPrefix}{apikeys}`
  return ApiKeyStore.of({
    save: (record) =>
      Effect.suspend(() => {
        const { lastUsedAt, revokedAt, ...fixed } = record
        return connection.run(
          "ApiKeyStore.save",
          save,
          [hashKey],
          [record.id, encodeRecord(fixed), lastUsedAt ?? "", revokedAt ?? ""],
          Schema.Number
        )
      }).pipe(Effect.asVoid),
    find: (id) =>
      connection
        .send(
          "ApiKeyStore.find",
          (client) => client.hmget(hashKey, `k:${id}`, `u:${id}`, `r:${id}`),
          Schema.Union([Schema.Tuple([Schema.Null, Schema.Unknown, Schema.Unknown]), StoredKey])
        )
        .pipe(Effect.map((stored) => (stored[0] === null ? undefined : recordOf(stored)))),
    list: connection
      .send("ApiKeyStore.list", (client) => client.hgetall(hashKey).then(groupById), Schema.Array(StoredKey))
      .pipe(Effect.map((stored) => stored.map(recordOf))),
    touch: (id, at) =>
      connection.run("ApiKeyStore.touch", touch, [hashKey], [id, at], Schema.Number).pipe(Effect.asVoid),
    revoke: (id, at) =>
      connection.run("ApiKeyStore.revoke", revoke, [hashKey], [id, at], Schema.Number).pipe(Effect.map((n) => n === 1))
  })
}
