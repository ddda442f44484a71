import { byPosition, type IndexBatch, OrderIndex } from "@walletgate/core/sweeper"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type Connection, luaScript } from "./connection"

// Each index in one slot, `{oi:<id>}`: `…c` = the cursor (the last block read, decimal); `…a` = a hash of the latest
// approval per `holder:token` (lower case), as JSON; `…s` = a list of the sweeps, oldest first, as JSON;
// `…t:<address>` = a hash of the last transfer time per token (lower case) of one address. A batch is applied by one
// script that first compares the cursor, so that two instances never apply one block twice, and that moves it last.

// KEYS: cursor, approvals, sweeps, then one transfer hash per address of the batch. ARGV: after ("" = none), toBlock,
// the approvals (count, then field and JSON of each, in chain order), the sweeps (count, then JSON of each, in chain
// order), the transfers (count, then the key's index among the transfer hashes, token and time of each).
const record = luaScript(`
local cursor = redis.call("GET", KEYS[1])
if ARGV[1] == "" then
  if cursor then return 0 end
elseif cursor ~= ARGV[1] then
  return 0
end
local i = 3
local count = tonumber(ARGV[i])
i = i + 1
for _ = 1, count do
  redis.call("HSET", KEYS[2], ARGV[i], ARGV[i + 1])
  i = i + 2
end
count = tonumber(ARGV[i])
i = i + 1
for _ = 1, count do
  redis.call("RPUSH", KEYS[3], ARGV[i])
  i = i + 1
end
count = tonumber(ARGV[i])
i = i + 1
for _ = 1, count do
  local key = KEYS[3 + tonumber(ARGV[i])]
  local known = redis.call("HGET", key, ARGV[i + 1])
  if not known or tonumber(known) < tonumber(ARGV[i + 2]) then redis.call("HSET", key, ARGV[i + 1], ARGV[i + 2]) end
  i = i + 3
end
redis.call("SET", KEYS[1], ARGV[2])
return 1
`)

const Hex = Schema.TemplateLiteral(["0x", Schema.String])
const position = {
  blockNumber: Schema.BigIntFromString,
  time: Schema.Number,
  tx: Hex,
  logIndex: Schema.Number
}
const ApprovalJson = Schema.fromJsonString(
  Schema.Struct({ ...position, holder: Hex, token: Hex, value: Schema.BigIntFromString })
)
const SweepJson = Schema.fromJsonString(
  Schema.Struct({
    ...position,
    holder: Hex,
    token: Hex,
    taker: Hex,
    amount: Schema.BigIntFromString,
    ethPaid: Schema.BigIntFromString,
    fee: Schema.BigIntFromString,
    symbol: Schema.String,
    decimals: Schema.Number,
    ethPrice: Schema.Number
  })
)
const encodeApproval = Schema.encodeSync(ApprovalJson)
const encodeSweep = Schema.encodeSync(SweepJson)

/** `OrderIndex` on Redis: every instance of a fleet reads and extends one index per id. */
export const redisOrderIndex = (connection: Connection): OrderIndex["Service"] => {
  const keyOf = (id: string, part: string) => `${connection.keyPrefix}{oi:${id}}${part}`
  const transfersKey = (id: string, address: string) => keyOf(id, `t:${address.toLowerCase()}`)
  return OrderIndex.of({
    cursor: (id) =>
      connection
        .send("OrderIndex.cursor", (client) => client.get(keyOf(id, "c")), Schema.NullOr(Schema.BigIntFromString))
        .pipe(Effect.map((cursor) => cursor ?? undefined)),
    record: (id, batch: IndexBatch) => {
      const addresses = [
        ...new Set(batch.transfers.flatMap((transfer) => [transfer.from, transfer.to]).map((a) => a.toLowerCase()))
      ]
      const slot = new Map(addresses.map((address, index) => [address, index + 1]))
      const approvals = [...batch.approvals].sort(byPosition)
      const sweeps = [...batch.sweeps].sort(byPosition)
      const args: Array<string | number> = [
        batch.after === undefined ? "" : String(batch.after),
        String(batch.toBlock),
        approvals.length,
        ...approvals.flatMap((one) => [`${one.holder}:${one.token}`.toLowerCase(), encodeApproval(one)]),
        sweeps.length,
        ...sweeps.map((one) => encodeSweep(one)),
        batch.transfers.length * 2,
        ...batch.transfers.flatMap((one) =>
          [one.from, one.to].flatMap((party) => [slot.get(party.toLowerCase()) ?? 0, one.token.toLowerCase(), one.time])
        )
      ]
      return connection
        .run(
          "OrderIndex.record",
          record,
          [keyOf(id, "c"), keyOf(id, "a"), keyOf(id, "s"), ...addresses.map((address) => transfersKey(id, address))],
          args,
          Schema.Number
        )
        .pipe(Effect.map((applied) => applied === 1))
    },
    standingApprovals: (id) =>
      connection
        .send("OrderIndex.standingApprovals", (client) => client.hvals(keyOf(id, "a")), Schema.Array(ApprovalJson))
        .pipe(Effect.map((approvals) => approvals.filter((approval) => approval.value > 0n))),
    sweeps: (id, holder) =>
      connection
        .send("OrderIndex.sweeps", (client) => client.lrange(keyOf(id, "s"), 0, -1), Schema.Array(SweepJson))
        .pipe(
          Effect.map((sweeps) =>
            sweeps
              .filter((sweep) => holder === undefined || sweep.holder.toLowerCase() === holder.toLowerCase())
              .reverse()
          )
        ),
    lastTransfers: (id, address) =>
      connection
        .send(
          "OrderIndex.lastTransfers",
          (client) => client.hgetall(transfersKey(id, address)),
          Schema.Record(Schema.String, Schema.NumberFromString)
        )
        .pipe(Effect.map((times) => new Map(Object.entries(times))))
  })
}
