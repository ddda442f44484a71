import {
  RECENT_INDEX_MAX,
  RECENT_SCAN_MAX,
  recentOf,
  standingWithHash,
  TransactionLog,
  type TxRecord,
  TxStatus
} from "@walletgate/core/state"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type Connection, luaScript } from "./connection"

// One hash per transaction, `{tx:<id>}`: r = the record as saved (JSON), o = its outcome once settled
// (JSON), laid over the record when read. Settling writes one field of an existing record and never
// rewrites it, so settle and discard cannot interleave into a half record. Kept forever, as the record
// of what the gateway broadcast.
//
// `{txhs:<hash in lower case>}` = the set of ids of the records saved or settled with that user operation or
// transaction hash (one bundle transaction includes several operations; two requests may sign the same operation).
// It lies in another slot than the records, so it is written first, by its own command: an id whose record never
// came (a failed save), is gone, or has another hash now finds nothing, since each record is checked when read.

// `{txrecent}` = a sorted set of ids scored by their record's `createdAt`, the operators' listing of recent operations,
// trimmed to the RECENT_INDEX_MAX newest on every save. Another slot again, written before the record: an id whose
// record never came or was discarded finds nothing when read.
const indexRecent = luaScript(`
redis.call("ZADD", KEYS[1], ARGV[1], ARGV[2])
redis.call("ZREMRANGEBYRANK", KEYS[1], 0, -1 - tonumber(ARGV[3]))
return 1
`)

// Saving replaces the whole record, outcome included.
const save = luaScript(`
redis.call("DEL", KEYS[1])
redis.call("HSET", KEYS[1], "r", ARGV[1])
return 1
`)

// Settling a record that is not there (never saved, or discarded) must not bring half of one back; a record
// already final (settled, or saved final) is never settled again: the first settlement wins (1), others get 0.
const settle = luaScript(`
local record = redis.call("HGET", KEYS[1], "r")
if not record then return 0 end
if redis.call("HEXISTS", KEYS[1], "o") == 1 then return 0 end
if cjson.decode(record).status ~= "submitted" then return 0 end
redis.call("HSET", KEYS[1], "o", ARGV[1])
return 1
`)

const RecordJson = Schema.fromJsonString(
  Schema.Struct({
    id: Schema.String,
    kind: Schema.Literals(["kernel", "payout"]),
    owner: Schema.String,
    network: Schema.String,
    chainId: Schema.Int,
    account: Schema.String,
    txHash: Schema.optionalKey(Schema.String),
    userOpHash: Schema.optionalKey(Schema.String),
    userOperation: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
    sentAfterBlock: Schema.optionalKey(Schema.Int),
    gasHold: Schema.optionalKey(
      Schema.Struct({
        entries: Schema.Array(
          Schema.Struct({
            scope: Schema.String,
            names: Schema.Array(Schema.String),
            windowMs: Schema.optionalKey(Schema.Number)
          })
        ),
        gas: Schema.Number,
        windowMs: Schema.Number,
        at: Schema.Number
      })
    ),
    status: TxStatus,
    blockNumber: Schema.optionalKey(Schema.Int),
    gasUsed: Schema.optionalKey(Schema.String),
    createdAt: Schema.Number,
    details: Schema.Record(Schema.String, Schema.Unknown)
  })
)
const encodeRecord = Schema.encodeSync(RecordJson)
const OutcomeJson = Schema.fromJsonString(
  Schema.Union([
    Schema.Struct({
      status: Schema.Literals(["confirmed", "reverted"]),
      blockNumber: Schema.Int,
      gasUsed: Schema.String,
      txHash: Schema.optionalKey(Schema.String)
    }),
    Schema.Struct({ status: Schema.Literal("dropped") })
  ])
)
const encodeOutcome = Schema.encodeSync(OutcomeJson)
const Stored = Schema.Tuple([Schema.NullOr(RecordJson), Schema.NullOr(OutcomeJson)])

/** `TransactionLog` on Redis: each transaction in its own hash; records are checked when read. */
export const redisTransactionLog = (connection: Connection): TransactionLog["Service"] => {
  const txKey = (id: string) => `${connection.keyPrefix}{tx:${id}}`
  const hashKey = (hash: string) => `${connection.keyPrefix}{txhs:${hash.toLowerCase()}}`
  const recentKey = `${connection.keyPrefix}{txrecent}`
  // Named for the operation that writes it: a failure is that operation's.
  const index = (operation: string, id: string, hashes: ReadonlyArray<string | undefined>) =>
    Effect.forEach(
      hashes.filter((hash): hash is string => hash !== undefined),
      (hash) => connection.send(operation, (client) => client.sadd(hashKey(hash), id), Schema.Number),
      { discard: true }
    )
  const find = (id: string) =>
    connection
      .send("TransactionLog.find", (client) => client.hmget(txKey(id), "r", "o"), Stored)
      .pipe(
        Effect.map(([record, outcome]): TxRecord | undefined =>
          record === null ? undefined : outcome === null ? record : { ...record, ...outcome }
        )
      )
  return TransactionLog.of({
    save: (record) =>
      index("TransactionLog.save", record.id, [record.userOpHash, record.txHash]).pipe(
        Effect.andThen(
          connection.run(
            "TransactionLog.save",
            indexRecent,
            [recentKey],
            [record.createdAt, record.id, RECENT_INDEX_MAX],
            Schema.Number
          )
        ),
        Effect.andThen(
          Effect.suspend(() =>
            connection.run("TransactionLog.save", save, [txKey(record.id)], [encodeRecord(record)], Schema.Number)
          )
        ),
        Effect.asVoid
      ),
    find,
    findByHash: (hash) =>
      connection
        .send("TransactionLog.findByHash", (client) => client.smembers(hashKey(hash)), Schema.Array(Schema.String))
        .pipe(
          Effect.flatMap((ids) => Effect.forEach(ids, find, { concurrency: "unbounded" })),
          Effect.map((found) => standingWithHash(found, hash))
        ),
    settle: (id, outcome) =>
      index("TransactionLog.settle", id, ["txHash" in outcome ? outcome.txHash : undefined]).pipe(
        Effect.andThen(
          Effect.suspend(() =>
            connection.run("TransactionLog.settle", settle, [txKey(id)], [encodeOutcome(outcome)], Schema.Number)
          )
        ),
        Effect.map((settled) => settled === 1)
      ),
    discard: (id) =>
      connection
        .send("TransactionLog.discard", (client) => client.del(txKey(id)), Schema.Number)
        .pipe(
          Effect.andThen(
            connection.send("TransactionLog.discard", (client) => client.zrem(recentKey, id), Schema.Number)
          ),
          Effect.asVoid
        ),
    recent: (query) =>
      connection
        .send(
          "TransactionLog.recent",
          (client) =>
            client.zrevrangebyscore(
              recentKey,
              query.until === undefined ? "+inf" : query.until,
              query.since === undefined ? "-inf" : query.since,
              "LIMIT",
              0,
              RECENT_SCAN_MAX
            ),
          Schema.Array(Schema.String)
        )
        .pipe(
          Effect.flatMap((ids) => Effect.forEach(ids, find, { concurrency: 16 })),
          Effect.map((found) => recentOf(found, query))
        )
  })
}
