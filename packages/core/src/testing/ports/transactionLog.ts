import * as Effect from "effect/Effect"
import { TransactionLog, type TxOutcome, type TxRecord } from "../../state/TransactionLog"
import { concurrently, expectEqual, type PortContractCase, T0 } from "./contract"

/** A submitted operation as `UserOperations` records it; `n` varies its id and hash. */
const submitted = (n: number, extra: Partial<TxRecord> = {}): TxRecord => ({
  id: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`,
  kind: n % 2 === 0 ? "payout" : "kernel",
  owner: n % 2 === 0 ? "key000000001" : "wgc_app",
  network: "anvil",
  chainId: 31337,
  account: "0x00000000000000000000000000000000000000A1",
  txHash: `0x${n.toString(16).padStart(64, "0")}`,
  status: "submitted",
  createdAt: T0 + n,
  details: {
    userId: "phone:00000000-0000-4000-8000-000000000001",
    transfers: [
      { to: "0x00000000000000000000000000000000000000b2", amount: "115792089237316195423570985008687907853" }
    ],
    calls: [],
    memo: null,
    nested: { empty: {}, flags: [true, false] }
  },
  ...extra
})
const CONFIRMED: TxOutcome = { status: "confirmed", blockNumber: 12, gasUsed: "52341" }
const REVERTED: TxOutcome = { status: "reverted", blockNumber: 13, gasUsed: "21000" }
const DROPPED: TxOutcome = { status: "dropped" }

const logCase = (
  name: string,
  run: (log: TransactionLog["Service"]) => Effect.Effect<void, unknown>
): PortContractCase<TransactionLog> => ({ name, run: TransactionLog.use(run) })

/** The contract of `TransactionLog` (docs/security.md): every implementation must pass every case. */
export const transactionLogContract: ReadonlyArray<PortContractCase<TransactionLog>> = [
  logCase("finds no record for an unknown id", (log) =>
    Effect.gen(function* () {
      yield* expectEqual("find", yield* log.find(submitted(1).id), undefined)
    })
  ),
  logCase("finds a saved record exactly as saved, its details included", (log) =>
    Effect.gen(function* () {
      yield* log.save(submitted(1))
      yield* log.save(submitted(2, { details: {} }))
      yield* expectEqual("kernel", yield* log.find(submitted(1).id), submitted(1))
      yield* expectEqual("payout without details", yield* log.find(submitted(2).id), submitted(2, { details: {} }))
    })
  ),
  logCase("settles a submitted record with its outcome and keeps the rest", (log) =>
    Effect.gen(function* () {
      yield* log.save(submitted(1))
      yield* log.save(submitted(2))
      yield* log.settle(submitted(1).id, CONFIRMED)
      yield* log.settle(submitted(2).id, REVERTED)
      yield* expectEqual("confirmed", yield* log.find(submitted(1).id), submitted(1, CONFIRMED))
      yield* expectEqual("reverted", yield* log.find(submitted(2).id), submitted(2, REVERTED))
    })
  ),
  logCase("keeps the first outcome of a record settled twice: a final record never changes", (log) =>
    Effect.gen(function* () {
      yield* log.save(submitted(1))
      yield* expectEqual("first", yield* log.settle(submitted(1).id, REVERTED), true)
      yield* expectEqual("second", yield* log.settle(submitted(1).id, CONFIRMED), false)
      yield* expectEqual("dropped", yield* log.settle(submitted(1).id, DROPPED), false)
      yield* expectEqual("find", yield* log.find(submitted(1).id), submitted(1, REVERTED))
    })
  ),
  logCase("settles a record dropped (never included) without a block", (log) =>
    Effect.gen(function* () {
      yield* log.save(submitted(1))
      yield* expectEqual("settled", yield* log.settle(submitted(1).id, DROPPED), true)
      yield* expectEqual("find", yield* log.find(submitted(1).id), submitted(1, DROPPED))
    })
  ),
  logCase("settles a record once when 20 settlements race: exactly one wins", (log) =>
    Effect.gen(function* () {
      yield* log.save(submitted(1))
      const won = yield* concurrently(20, (i) => log.settle(submitted(1).id, i % 2 === 0 ? CONFIRMED : DROPPED))
      yield* expectEqual("winners", won.filter(Boolean).length, 1)
      const found = yield* log.find(submitted(1).id)
      yield* expectEqual("one outcome", ["confirmed", "dropped"].includes(String(found?.status)), true)
    })
  ),
  logCase("replaces a record saved again, its outcome included", (log) =>
    Effect.gen(function* () {
      yield* log.save(submitted(1))
      yield* log.settle(submitted(1).id, CONFIRMED)
      yield* log.save(submitted(1, { txHash: `0x${"cd".repeat(32)}` }))
      yield* expectEqual("find", yield* log.find(submitted(1).id), submitted(1, { txHash: `0x${"cd".repeat(32)}` }))
    })
  ),
  logCase("settles nothing for an unknown id: no record appears", (log) =>
    Effect.gen(function* () {
      yield* log.settle(submitted(1).id, CONFIRMED)
      yield* expectEqual("find", yield* log.find(submitted(1).id), undefined)
    })
  ),
  logCase("forgets a discarded record, and discards an unknown id harmlessly", (log) =>
    Effect.gen(function* () {
      yield* log.save(submitted(1))
      yield* log.save(submitted(2))
      yield* log.discard(submitted(1).id)
      yield* log.discard(submitted(3).id)
      yield* expectEqual("discarded", yield* log.find(submitted(1).id), undefined)
      yield* expectEqual("other record", yield* log.find(submitted(2).id), submitted(2))
    })
  ),
  logCase("never brings back a discarded record by settling it", (log) =>
    Effect.gen(function* () {
      yield* log.save(submitted(1))
      yield* log.discard(submitted(1).id)
      yield* log.settle(submitted(1).id, CONFIRMED)
      yield* expectEqual("find", yield* log.find(submitted(1).id), undefined)
    })
  ),
  logCase("leaves nothing of a record discarded while 20 settlements run", (log) =>
    Effect.gen(function* () {
      yield* log.save(submitted(1))
      yield* Effect.all(
        [concurrently(20, () => log.settle(submitted(1).id, CONFIRMED)), log.discard(submitted(1).id)],
        {
          concurrency: "unbounded"
        }
      )
      yield* expectEqual("find", yield* log.find(submitted(1).id), undefined)
    })
  ),
  logCase("finds a record by its user operation's hash and by its transaction's hash, in any case", (log) =>
    Effect.gen(function* () {
      const operation = submitted(1, { userOpHash: `0x${"ab".repeat(32)}` })
      yield* log.save(operation)
      yield* log.save(submitted(2))
      yield* expectEqual("userOpHash", yield* log.findByHash(`0x${"ab".repeat(32)}`), [operation])
      yield* expectEqual("upper case", yield* log.findByHash(`0x${"AB".repeat(32)}`), [operation])
      yield* expectEqual("txHash", yield* log.findByHash(String(operation.txHash)), [operation])
      yield* expectEqual("other record", yield* log.findByHash(String(submitted(2).txHash)), [submitted(2)])
      yield* expectEqual("unknown hash", yield* log.findByHash(`0x${"ef".repeat(32)}`), [])
    })
  ),
  logCase("finds a user operation by the transaction that included it once settled with it", (log) =>
    Effect.gen(function* () {
      const { txHash: _, ...operation } = submitted(1, { userOpHash: `0x${"ab".repeat(32)}` })
      const included = `0x${"cd".repeat(32)}`
      yield* log.save(operation)
      yield* expectEqual("before", yield* log.findByHash(included), [])
      yield* log.settle(operation.id, { ...CONFIRMED, txHash: included })
      const settled = { ...operation, ...CONFIRMED, txHash: included }
      yield* expectEqual("by txHash", yield* log.findByHash(included), [settled])
      yield* expectEqual("by userOpHash", yield* log.findByHash(`0x${"ab".repeat(32)}`), [settled])
    })
  ),
  logCase("finds nothing by the hash of a discarded record, or by a hash its record was saved again without", (log) =>
    Effect.gen(function* () {
      yield* log.save(submitted(1))
      yield* log.discard(submitted(1).id)
      yield* expectEqual("discarded", yield* log.findByHash(String(submitted(1).txHash)), [])
      yield* log.save(submitted(2))
      yield* log.save(submitted(2, { txHash: `0x${"cd".repeat(32)}` }))
      yield* expectEqual("old hash", yield* log.findByHash(String(submitted(2).txHash)), [])
      yield* expectEqual("new hash", yield* log.findByHash(`0x${"cd".repeat(32)}`), [
        submitted(2, { txHash: `0x${"cd".repeat(32)}` })
      ])
    })
  ),
  logCase(
    "finds both records of one operation signed twice, and only the one left once the other is discarded",
    (log) =>
      Effect.gen(function* () {
        // Two requests that signed the same operation (one hash) both recorded it; the bundler refused the second.
        const hash = `0x${"ab".repeat(32)}`
        const first = submitted(1, { userOpHash: hash })
        const second = submitted(2, { userOpHash: hash })
        yield* log.save(first)
        yield* log.save(second)
        yield* expectEqual("while both stand", yield* log.findByHash(hash), [first, second])
        yield* log.discard(second.id)
        yield* expectEqual("after the discard", yield* log.findByHash(hash), [first])
        yield* log.discard(first.id)
        const third = submitted(3, { userOpHash: hash })
        yield* log.save(third)
        yield* expectEqual("the next one saved with it", yield* log.findByHash(hash), [third])
      })
  ),
  logCase("finds every operation one bundle transaction included, whoever's, oldest first", (log) =>
    Effect.gen(function* () {
      // Three apps' operations, included by one bundle: settled with its one transaction hash, in any order.
      const bundle = `0x${"cd".repeat(32)}`
      const operation = (i: number): TxRecord => {
        const { txHash: _, ...unincluded } = submitted(i, {
          owner: `app-${i}`,
          userOpHash: `0x${String(i).repeat(64)}`
        })
        return unincluded
      }
      const operations = [operation(1), operation(2), operation(3)] as const
      yield* Effect.forEach(operations, log.save)
      yield* Effect.forEach(operations.toReversed(), (each) => log.settle(each.id, { ...CONFIRMED, txHash: bundle }), {
        concurrency: "unbounded"
      })
      const included = (each: TxRecord): TxRecord => ({ ...each, ...CONFIRMED, txHash: bundle })
      const settled = operations.map(included)
      yield* expectEqual("by the bundle's hash", yield* log.findByHash(bundle), settled)
      yield* expectEqual("by one operation's hash", yield* log.findByHash(`0x${"2".repeat(64)}`), [
        included(operations[1])
      ])
      yield* log.discard(operations[0].id)
      yield* expectEqual("one discarded", yield* log.findByHash(bundle), settled.slice(1))
    })
  ),
  logCase("settles every one of 20 records concurrently", (log) =>
    Effect.gen(function* () {
      const records = Array.from({ length: 20 }, (_, i) => submitted(i))
      yield* Effect.forEach(records, log.save)
      yield* concurrently(20, (i) => log.settle(submitted(i).id, { ...CONFIRMED, blockNumber: 100 + i }))
      const found = yield* Effect.forEach(records, (record) => log.find(record.id))
      yield* expectEqual(
        "found",
        found,
        records.map((record, i) => ({ ...record, ...CONFIRMED, blockNumber: 100 + i }))
      )
    })
  ),
  logCase("lists recent records newest first, within the time window, by owner and status, at most the limit", (log) =>
    Effect.gen(function* () {
      const records = Array.from({ length: 6 }, (_, i) => submitted(i + 1))
      // Saved out of time order: the listing orders by createdAt, not by saving.
      yield* Effect.forEach(records.toReversed(), log.save)
      yield* log.settle(submitted(3).id, CONFIRMED)
      const newestFirst = records
        .toReversed()
        .map((record) => (record.id === submitted(3).id ? { ...record, ...CONFIRMED } : record))
      yield* expectEqual("all", yield* log.recent({ limit: 10 }), newestFirst)
      yield* expectEqual("limit", yield* log.recent({ limit: 2 }), newestFirst.slice(0, 2))
      yield* expectEqual(
        "window",
        yield* log.recent({ since: T0 + 2, until: T0 + 4, limit: 10 }),
        newestFirst.filter((record) => record.createdAt >= T0 + 2 && record.createdAt <= T0 + 4)
      )
      yield* expectEqual(
        "owner",
        yield* log.recent({ owner: "wgc_app", limit: 10 }),
        newestFirst.filter((record) => record.owner === "wgc_app")
      )
      yield* expectEqual("status", yield* log.recent({ status: "confirmed", limit: 10 }), [
        { ...submitted(3), ...CONFIRMED }
      ])
      yield* log.discard(submitted(6).id)
      yield* expectEqual("discarded", yield* log.recent({ limit: 1 }), newestFirst.slice(1, 2))
      // A record of nothing signed (a split payout's manifest) is not a transaction: never listed.
      const { txHash: _, ...manifest } = submitted(7, { details: { parts: [{ from: 0, to: 1 }] } })
      yield* log.save(manifest)
      yield* expectEqual("unsigned", yield* log.recent({ limit: 1 }), newestFirst.slice(1, 2))
    })
  )
]
