import * as Effect from "effect/Effect"
import type { Address, Hash } from "viem"
import {
  type EventPosition,
  type IndexBatch,
  type IndexedApproval,
  type IndexedSweep,
  OrderIndex
} from "../../sweeper/OrderIndex"
import { concurrently, countOf, expectEqual, type PortContractCase } from "./contract"

const HOLDER: Address = "0x52908400098527886E0F7030069857D2E4169EE7"
const OTHER: Address = "0x000000000000000000000000000000000000dEaD"
const TOKEN: Address = "0x00000000000000000000000000000000000000C0"
const TOKEN_2: Address = "0x00000000000000000000000000000000000000C1"
const TAKER: Address = "0x00000000000000000000000000000000000000Aa"
const tx = (n: number): Hash => `0x${n.toString(16).padStart(64, "0")}`

/** An event of block `blockNumber` at `logIndex` (12 s blocks; a transaction of its own). */
const at = (blockNumber: bigint, logIndex: number): EventPosition => ({
  blockNumber,
  logIndex,
  time: Number(blockNumber) * 12,
  tx: tx(Number(blockNumber) * 100 + logIndex)
})
const approval = (blockNumber: bigint, logIndex: number, value: bigint, holder = HOLDER): IndexedApproval => ({
  ...at(blockNumber, logIndex),
  holder,
  token: TOKEN,
  value
})
const sweep = (blockNumber: bigint, logIndex: number, holder = HOLDER): IndexedSweep => ({
  ...at(blockNumber, logIndex),
  holder,
  token: TOKEN,
  taker: TAKER,
  // Past 2^53: amounts are exact base units.
  amount: 2n ** 200n + 5n,
  ethPaid: 100n,
  fee: 2n,
  symbol: "DUST",
  decimals: 18,
  ethPrice: 2000.5
})
const batch = (after: bigint | undefined, toBlock: bigint, events: Partial<IndexBatch> = {}): IndexBatch => ({
  after,
  toBlock,
  approvals: [],
  sweeps: [],
  transfers: [],
  ...events
})
const holderValues = (approvals: ReadonlyArray<IndexedApproval>) =>
  approvals.map((one) => `${one.holder}:${one.value}`).sort()

const indexCase = (
  name: string,
  run: (index: OrderIndex["Service"]) => Effect.Effect<void, unknown>
): PortContractCase<OrderIndex> => ({ name, run: OrderIndex.use(run) })

/**
 * The contract of `OrderIndex` (the sweeper's index of approvals, sweeps and transfers, by cursor): every
 * implementation must pass it; one shared by many instances must also agree under concurrent writers.
 */
export const orderIndexContract: ReadonlyArray<PortContractCase<OrderIndex>> = [
  indexCase("moves the cursor only from where the batch continues (compare-and-set); indexes are apart", (index) =>
    Effect.gen(function* () {
      yield* expectEqual("empty", yield* index.cursor("a"), undefined)
      yield* expectEqual("first", yield* index.record("a", batch(undefined, 9n)), true)
      yield* expectEqual(
        "from nothing again",
        yield* index.record("a", batch(undefined, 20n, { sweeps: [sweep(15n, 0)] })),
        false
      )
      yield* expectEqual("from elsewhere", yield* index.record("a", batch(5n, 20n, { sweeps: [sweep(15n, 0)] })), false)
      yield* expectEqual("nothing applied", yield* index.sweeps("a"), [])
      yield* expectEqual("next", yield* index.record("a", batch(9n, 20n)), true)
      yield* expectEqual("cursor", yield* index.cursor("a"), 20n)
      yield* expectEqual("other index", yield* index.cursor("b"), undefined)
      yield* expectEqual("other index's sweeps", yield* index.sweeps("b"), [])
    })
  ),
  indexCase("applies one of 20 writers of the same batch, once", (index) =>
    Effect.gen(function* () {
      yield* index.record("a", batch(undefined, 4n))
      const applied = yield* concurrently(20, () => index.record("a", batch(4n, 9n, { sweeps: [sweep(6n, 0)] })))
      yield* expectEqual("applied", countOf(applied, true), 1)
      yield* expectEqual("sweeps", (yield* index.sweeps("a")).length, 1)
      yield* expectEqual("cursor", yield* index.cursor("a"), 9n)
    })
  ),
  indexCase("keeps the latest approval per holder and token by chain order; an approval of zero closes it", (index) =>
    Effect.gen(function* () {
      // Within a batch out of order: the chain order decides which one is the latest.
      yield* index.record(
        "a",
        batch(undefined, 10n, { approvals: [approval(7n, 1, 50n), approval(7n, 0, 10n), approval(3n, 0, 99n, OTHER)] })
      )
      yield* expectEqual(
        "standing",
        holderValues(yield* index.standingApprovals("a")),
        [`${OTHER}:99`, `${HOLDER}:50`].sort()
      )
      const latest = (yield* index.standingApprovals("a")).find((one) => one.holder === HOLDER)
      yield* expectEqual("exactly as recorded", latest, approval(7n, 1, 50n))
      yield* index.record("a", batch(10n, 11n, { approvals: [approval(11n, 0, 0n)] }))
      yield* expectEqual("closed", holderValues(yield* index.standingApprovals("a")), [`${OTHER}:99`])
      yield* index.record("a", batch(11n, 12n, { approvals: [approval(12n, 0, 2n ** 255n)] }))
      yield* expectEqual(
        "reopened, exact",
        holderValues(yield* index.standingApprovals("a")),
        [`${OTHER}:99`, `${HOLDER}:${2n ** 255n}`].sort()
      )
    })
  ),
  indexCase("lists sweeps newest first, exactly as recorded, all or of one holder in any letter case", (index) =>
    Effect.gen(function* () {
      yield* index.record("a", batch(undefined, 5n, { sweeps: [sweep(5n, 1), sweep(2n, 0, OTHER), sweep(5n, 0)] }))
      yield* index.record("a", batch(5n, 8n, { sweeps: [sweep(8n, 0)] }))
      yield* expectEqual("all", yield* index.sweeps("a"), [
        sweep(8n, 0),
        sweep(5n, 1),
        sweep(5n, 0),
        sweep(2n, 0, OTHER)
      ])
      yield* expectEqual("of one holder", yield* index.sweeps("a", OTHER.toLowerCase() as Address), [
        sweep(2n, 0, OTHER)
      ])
      yield* expectEqual("of none", yield* index.sweeps("a", TAKER), [])
    })
  ),
  indexCase("remembers the last transfer time per address and token, for both parties, across batches", (index) =>
    Effect.gen(function* () {
      yield* index.record(
        "a",
        batch(undefined, 9n, {
          transfers: [
            { token: TOKEN, from: OTHER, to: HOLDER, time: 300 },
            { token: TOKEN, from: HOLDER, to: OTHER, time: 100 }
          ]
        })
      )
      yield* expectEqual("holder", [...(yield* index.lastTransfers("a", HOLDER))], [[TOKEN.toLowerCase(), 300]])
      yield* expectEqual(
        "other, any case",
        [...(yield* index.lastTransfers("a", OTHER.toUpperCase() as Address))],
        [[TOKEN.toLowerCase(), 300]]
      )
      yield* expectEqual("none", (yield* index.lastTransfers("a", TAKER)).size, 0)
      yield* index.record(
        "a",
        batch(9n, 12n, {
          transfers: [
            { token: TOKEN, from: HOLDER, to: TAKER, time: 200 },
            { token: TOKEN_2, from: TAKER, to: HOLDER, time: 400 }
          ]
        })
      )
      const holder = new Map(yield* index.lastTransfers("a", HOLDER))
      yield* expectEqual("an earlier time never goes back", holder.get(TOKEN.toLowerCase()), 300)
      yield* expectEqual("another token", holder.get(TOKEN_2.toLowerCase()), 400)
      yield* expectEqual("other index", (yield* index.lastTransfers("b", HOLDER)).size, 0)
    })
  )
]
