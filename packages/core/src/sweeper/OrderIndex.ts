import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Address, Hash } from "viem"
import type { StoreUnavailable } from "../state/errors"

/** Where an event is on the chain: its block (number and time, Unix seconds), transaction and log index. */
export interface EventPosition {
  readonly blockNumber: bigint
  readonly time: number
  readonly tx: Hash
  readonly logIndex: number
}

/** An `Approval` of a supported token with the sweeper as spender: it opens (or, at 0, closes) an order. */
export interface IndexedApproval extends EventPosition {
  readonly holder: Address
  readonly token: Address
  /** The allowance given, in base units. */
  readonly value: bigint
}

/** A `Swept` event of the sweeper, with the token's metadata and the ETH price when it was indexed. */
export interface IndexedSweep extends EventPosition {
  readonly holder: Address
  readonly token: Address
  readonly taker: Address
  readonly amount: bigint
  readonly ethPaid: bigint
  readonly fee: bigint
  readonly symbol: string
  readonly decimals: number
  /** The USD price of ETH when the indexer read the sweep (no historical price source is assumed). */
  readonly ethPrice: number
}

/** A `Transfer` of a supported token: only its parties, token and time are kept. */
export interface IndexedTransfer {
  readonly token: Address
  readonly from: Address
  readonly to: Address
  readonly time: number
}

/** The events of the blocks after the cursor up to `toBlock`, applied together. */
export interface IndexBatch {
  /** The cursor the batch continues from (`undefined`: the index is empty); see {@link OrderIndex}. */
  readonly after: bigint | undefined
  /** The last block read: the new cursor. */
  readonly toBlock: bigint
  readonly approvals: ReadonlyArray<IndexedApproval>
  readonly sweeps: ReadonlyArray<IndexedSweep>
  readonly transfers: ReadonlyArray<IndexedTransfer>
}

/**
 * What the order indexer has read from the chain: standing approvals to the sweeper, sweeps and the last
 * transfer per address and token, up to a cursor (the last block read). Each index is named by an id
 * that changes with what it follows (network, sweeper, tokens, first block), so a changed token list
 * starts a fresh index.
 */
export class OrderIndex extends Context.Service<
  OrderIndex,
  {
    /** The last block read into index `id`; `undefined` before anything was. */
    readonly cursor: (id: string) => Effect.Effect<bigint | undefined, StoreUnavailable>
    /**
     * Applies `batch` if the cursor is still `batch.after` (compare-and-set, so that two writers never
     * apply one block twice) and moves the cursor to `batch.toBlock`; answers whether it applied.
     */
    readonly record: (id: string, batch: IndexBatch) => Effect.Effect<boolean, StoreUnavailable>
    /** The latest approval of each holder and token whose value is above zero: the candidate open orders. */
    readonly standingApprovals: (id: string) => Effect.Effect<ReadonlyArray<IndexedApproval>, StoreUnavailable>
    /** Every sweep, or those of `holder`, newest first. */
    readonly sweeps: (id: string, holder?: Address) => Effect.Effect<ReadonlyArray<IndexedSweep>, StoreUnavailable>
    /** The time (Unix seconds) of the last transfer to or from `address`, per token (lower-case address). */
    readonly lastTransfers: (
      id: string,
      address: Address
    ) => Effect.Effect<ReadonlyMap<string, number>, StoreUnavailable>
  }
>()("@walletgate/core/OrderIndex") {
  /** Indexes in this process's memory (rebuilt from the chain after a restart). */
  static readonly memory: Layer.Layer<OrderIndex> = Layer.sync(OrderIndex, () => {
    interface State {
      cursor: bigint | undefined
      /** `holder:token` (lower case) → the latest approval. */
      readonly approvals: Map<string, IndexedApproval>
      /** Oldest first. */
      readonly sweeps: Array<IndexedSweep>
      /** `address` (lower case) → token (lower case) → time. */
      readonly transfers: Map<string, Map<string, number>>
    }
    const states = new Map<string, State>()
    const stateOf = (id: string): State => {
      const existing = states.get(id)
      if (existing !== undefined) return existing
      const created: State = { cursor: undefined, approvals: new Map(), sweeps: [], transfers: new Map() }
      states.set(id, created)
      return created
    }
    const touch = (state: State, address: Address, token: Address, time: number) => {
      const key = address.toLowerCase()
      const tokens = state.transfers.get(key) ?? new Map<string, number>()
      const tokenKey = token.toLowerCase()
      tokens.set(tokenKey, Math.max(tokens.get(tokenKey) ?? 0, time))
      state.transfers.set(key, tokens)
    }
    return OrderIndex.of({
      cursor: (id) => Effect.sync(() => states.get(id)?.cursor),
      record: (id, batch) =>
        Effect.sync(() => {
          const state = stateOf(id)
          if (state.cursor !== batch.after) return false
          for (const approval of [...batch.approvals].sort(byPosition)) {
            state.approvals.set(`${approval.holder}:${approval.token}`.toLowerCase(), approval)
          }
          state.sweeps.push(...[...batch.sweeps].sort(byPosition))
          for (const transfer of batch.transfers) {
            touch(state, transfer.from, transfer.token, transfer.time)
            touch(state, transfer.to, transfer.token, transfer.time)
          }
          state.cursor = batch.toBlock
          return true
        }),
      standingApprovals: (id) =>
        Effect.sync(() => [...(states.get(id)?.approvals.values() ?? [])].filter((approval) => approval.value > 0n)),
      sweeps: (id, holder) =>
        Effect.sync(() =>
          (states.get(id)?.sweeps ?? [])
            .filter((sweep) => holder === undefined || sweep.holder.toLowerCase() === holder.toLowerCase())
            .reverse()
        ),
      lastTransfers: (id, address) =>
        Effect.sync(() => new Map(states.get(id)?.transfers.get(address.toLowerCase()) ?? []))
    })
  })
}

/** Chain order: by block, then by log index. */
export const byPosition = (a: EventPosition, b: EventPosition): number =>
  a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1
