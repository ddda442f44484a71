import { describe, expect, it } from "@effect/vitest"
import { OrderIndex } from "@walletgate/core"
import type { IndexBatch, IndexedApproval, IndexedSweep } from "@walletgate/core/sweeper"
import { Effect } from "effect"
import type { Address, Hash } from "viem"

const HOLDER: Address = "0x52908400098527886E0F7030069857D2E4169EE7"
const OTHER: Address = "0x000000000000000000000000000000000000dEaD"
const TOKEN: Address = "0x00000000000000000000000000000000000000C0"
const TAKER: Address = "0x00000000000000000000000000000000000000Aa"
const tx = (n: number): Hash => `0x${n.toString(16).padStart(64, "0")}`

const approval = (blockNumber: bigint, logIndex: number, value: bigint, holder = HOLDER): IndexedApproval => ({
  blockNumber,
  logIndex,
  time: Number(blockNumber) * 12,
  tx: tx(Number(blockNumber) * 100 + logIndex),
  holder,
  token: TOKEN,
  value
})
const sweep = (blockNumber: bigint, logIndex: number, holder = HOLDER): IndexedSweep => ({
  blockNumber,
  logIndex,
  time: Number(blockNumber) * 12,
  tx: tx(Number(blockNumber) * 100 + logIndex),
  holder,
  token: TOKEN,
  taker: TAKER,
  amount: 5n,
  ethPaid: 100n,
  fee: 2n,
  symbol: "DUST",
  decimals: 18,
  ethPrice: 2000
})
const batch = (after: bigint | undefined, toBlock: bigint, events: Partial<IndexBatch> = {}): IndexBatch => ({
  after,
  toBlock,
  approvals: [],
  sweeps: [],
  transfers: [],
  ...events
})

const withIndex = <A, E>(run: (index: OrderIndex["Service"]) => Effect.Effect<A, E>) =>
  OrderIndex.use(run).pipe(Effect.provide(OrderIndex.memory))

describe("OrderIndex.memory", () => {
  it.effect("moves the cursor only from where the batch continues (compare-and-set)", () =>
    withIndex((index) =>
      Effect.gen(function* () {
        expect(yield* index.cursor("a")).toBeUndefined()
        expect(yield* index.record("a", batch(undefined, 9n))).toBe(true)
        expect(yield* index.record("a", batch(undefined, 20n, { sweeps: [sweep(15n, 0)] }))).toBe(false)
        expect(yield* index.record("a", batch(5n, 20n, { sweeps: [sweep(15n, 0)] }))).toBe(false)
        expect(yield* index.sweeps("a")).toEqual([])
        expect(yield* index.record("a", batch(9n, 20n))).toBe(true)
        expect(yield* index.cursor("a")).toBe(20n)
        // Indexes are apart.
        expect(yield* index.cursor("b")).toBeUndefined()
      })
    )
  )

  it.effect("keeps the latest approval per holder and token; an approval of zero closes the order", () =>
    withIndex((index) =>
      Effect.gen(function* () {
        // Within a batch out of order: the chain order decides which one is the latest.
        yield* index.record(
          "a",
          batch(undefined, 10n, {
            approvals: [approval(7n, 1, 50n), approval(7n, 0, 10n), approval(3n, 0, 99n, OTHER)]
          })
        )
        // In no particular order: the lookups sort.
        expect((yield* index.standingApprovals("a")).map((a) => [a.holder, a.value])).toEqual(
          expect.arrayContaining([
            [HOLDER, 50n],
            [OTHER, 99n]
          ])
        )
        expect(yield* index.standingApprovals("a")).toHaveLength(2)
        yield* index.record("a", batch(10n, 11n, { approvals: [approval(11n, 0, 0n)] }))
        expect((yield* index.standingApprovals("a")).map((a) => a.holder)).toEqual([OTHER])
      })
    )
  )

  it.effect("lists sweeps newest first, all or of one holder, in any letter case", () =>
    withIndex((index) =>
      Effect.gen(function* () {
        yield* index.record("a", batch(undefined, 5n, { sweeps: [sweep(5n, 1), sweep(2n, 0, OTHER), sweep(5n, 0)] }))
        yield* index.record("a", batch(5n, 8n, { sweeps: [sweep(8n, 0)] }))
        expect((yield* index.sweeps("a")).map((s) => [s.blockNumber, s.logIndex])).toEqual([
          [8n, 0],
          [5n, 1],
          [5n, 0],
          [2n, 0]
        ])
        expect((yield* index.sweeps("a", OTHER.toLowerCase() as Address)).map((s) => s.blockNumber)).toEqual([2n])
      })
    )
  )

  it.effect("remembers the last transfer time per address and token, for both parties", () =>
    withIndex((index) =>
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
        expect([...(yield* index.lastTransfers("a", HOLDER))]).toEqual([[TOKEN.toLowerCase(), 300]])
        expect([...(yield* index.lastTransfers("a", OTHER))]).toEqual([[TOKEN.toLowerCase(), 300]])
        expect((yield* index.lastTransfers("a", TAKER)).size).toBe(0)
      })
    )
  )
})
