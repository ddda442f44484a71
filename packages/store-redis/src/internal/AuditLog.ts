import { AuditEntry, AuditLog, auditLimit } from "@walletgate/core/operator"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type Connection, luaScript } from "./connection"

// One sorted set, `{audit}`: each entry as JSON (its id makes it unique), scored by its time (epoch ms). A sorted
// set rather than a stream: reads are by time (`since`) and newest first, which ZREVRANGEBYSCORE answers in one
// command on any Redis version, and the retention is one ZREMRANGEBYSCORE, run with every append, so the set holds
// at most the retention's worth of operators' changes (a few per day, not a hot path).

const append = luaScript(`
redis.call("ZADD", KEYS[1], ARGV[1], ARGV[2])
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", "(" .. ARGV[3])
return 1
`)

const list = luaScript(`
return redis.call("ZREVRANGEBYSCORE", KEYS[1], "+inf", ARGV[1], "LIMIT", 0, ARGV[2])
`)

const EntryJson = Schema.fromJsonString(AuditEntry)
const encodeEntry = Schema.encodeSync(EntryJson)

/** `AuditLog` on Redis: entries are checked against `AuditEntry` when read; older than `retentionMs` are dropped. */
export const redisAuditLog = (connection: Connection, retentionMs: number): AuditLog["Service"] => {
  const setKey = `${connection.keyPrefix}{audit}`
  return AuditLog.of({
    append: (entry) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        connection.run(
          "AuditLog.append",
          append,
          [setKey],
          [Date.parse(entry.at), encodeEntry(entry), now - retentionMs],
          Schema.Number
        )
      ).pipe(Effect.asVoid),
    list: (query) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        connection.run(
          "AuditLog.list",
          list,
          [setKey],
          [Math.max(query.since ?? 0, now - retentionMs), auditLimit(query.limit)],
          Schema.Array(EntryJson)
        )
      )
  })
}
