import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { StoreUnavailable } from "./errors"
import type { GasHold } from "./GasLedger"

/**
 * Where a submitted operation stands, read when asked (docs/decisions.md, "Status read when asked"):
 * - `submitted`: pending. Accepted by the bundler (or its answer lost), not yet included; or included on the
 *   node's canonical chain with fewer blocks on top than the network's `confirmations`; or included once and then
 *   reorged out (it is pending again, and its signed operation is re-sent as it was).
 * - `confirmed`: final. Included on the node's canonical chain with the network's confirmations, its calls run.
 * - `reverted`: final. Included likewise, its calls reverted (nothing they did stands; the gas was paid).
 * - `dropped`: final. Never included, and it never can be: its EntryPoint nonce was used by another operation of
 *   the account (e.g. another plan payout took the turn), seen with the network's confirmations.
 *
 * Legal transitions ({@link txTransitions}): `submitted` → `submitted` | `confirmed` | `reverted` | `dropped`;
 * nothing leaves a final status. A reorg deeper than the network's `confirmations` is outside this model: set
 * `confirmations` for the chain's finality.
 */
export const TxStatus = Schema.Literals(["submitted", "confirmed", "reverted", "dropped"])
/** Where a submitted operation stands (see {@link TxStatus}). */
export type TxStatus = typeof TxStatus.Type

/** The final statuses: a record in one of them never changes again. */
export type FinalTxStatus = Exclude<TxStatus, "submitted">

/** The statuses each status may move to; a final status moves to none. */
const txTransitions: { readonly [S in TxStatus]: ReadonlyArray<TxStatus> } = {
  submitted: ["submitted", "confirmed", "reverted", "dropped"],
  confirmed: [],
  reverted: [],
  dropped: []
}

/** Whether `status` is final (it has no transition left). */
export const isFinalStatus = (status: TxStatus): status is FinalTxStatus => txTransitions[status].length === 0

/**
 * A transaction the gateway signed, recorded before it is broadcast (docs/security.md), so a crash and a
 * retry can never broadcast twice.
 */
export interface TxRecord {
  readonly id: string
  readonly kind: "kernel" | "payout"
  /** Who may read it: the app's client id, or the API key's id. */
  readonly owner: string
  readonly network: string
  readonly chainId: number
  readonly account: string
  /** The transaction's hash; for a user operation, the bundle's, once included. */
  readonly txHash?: string
  /** A user operation's hash (ERC-4337), when the record is one. */
  readonly userOpHash?: string
  /** The signed user operation as sent (JSON-RPC form), kept so that it can be re-sent as it was until final. */
  readonly userOperation?: Readonly<Record<string, string>>
  /** The node's latest block when the operation was prepared: its inclusion is looked for from there on. */
  readonly sentAfterBlock?: number
  /** The gas the spend policy reserved for it: given back if it is dropped (it then cost nothing). */
  readonly gasHold?: GasHold
  readonly status: TxStatus
  readonly blockNumber?: number
  readonly gasUsed?: string
  readonly createdAt: number
  /** What the answer shows beyond the common fields (the userId, the transfers, …). */
  readonly details: Readonly<Record<string, unknown>>
}

/** Whether `hash` (any case) is the record's user operation's hash or its including transaction's. */
const hasHash = (record: TxRecord, hash: string): boolean => {
  const wanted = hash.toLowerCase()
  return record.userOpHash?.toLowerCase() === wanted || record.txHash?.toLowerCase() === wanted
}

/** The records of `found` (read by id from a hash's index) that stand and still have `hash`, oldest first. */
export const standingWithHash = (found: ReadonlyArray<TxRecord | undefined>, hash: string): ReadonlyArray<TxRecord> =>
  found
    .filter((record): record is TxRecord => record !== undefined && hasHash(record, hash))
    .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))

/** How a transaction ended: included with the network's confirmations, or dropped (never included). */
export type TxOutcome =
  | {
      readonly status: "confirmed" | "reverted"
      readonly blockNumber: number
      readonly gasUsed: string
      /** The including transaction, for a user operation (its hash is known only once included). */
      readonly txHash?: string
    }
  | { readonly status: "dropped" }

/** How many of the newest records the listing of recent ones keeps in its time index (older ones stay findable by id). */
export const RECENT_INDEX_MAX = 10_000

/** The most records one listing of recent ones returns. */
export const RECENT_LIST_MAX = 200

/** How many records of the time window one listing reads at most before its filters (owner, status) are applied. */
export const RECENT_SCAN_MAX = 1000

/** A listing of recent records: newest first, within `since`…`until` (epoch ms, inclusive), of one owner or status. */
export interface RecentQuery {
  readonly since?: number
  readonly until?: number
  /** Only this owner's records (an app's client id, or an API key's id). */
  readonly owner?: string
  readonly status?: TxStatus
  /** 1 to {@link RECENT_LIST_MAX}. */
  readonly limit: number
}

/** A listing's limit clamped to 1…{@link RECENT_LIST_MAX} (a non-number reads as the maximum). */
const recentLimit = (limit: number): number =>
  Number.isFinite(limit) ? Math.min(RECENT_LIST_MAX, Math.max(1, Math.floor(limit))) : RECENT_LIST_MAX

/**
 * The records of a listing among `found` (the newest of its window, read newest first, at most
 * {@link RECENT_SCAN_MAX}): those that stand, are of a signed transaction (a `userOpHash` or a `txHash`: not a split
 * payout's manifest, nor a part refused before it was signed, which its payout's answer shows) and pass its filters,
 * at most its limit.
 */
export const recentOf = (found: ReadonlyArray<TxRecord | undefined>, query: RecentQuery): ReadonlyArray<TxRecord> =>
  found
    .filter(
      (record): record is TxRecord =>
        record !== undefined &&
        (record.userOpHash !== undefined || record.txHash !== undefined) &&
        (query.owner === undefined || record.owner === query.owner) &&
        (query.status === undefined || record.status === query.status)
    )
    .slice(0, recentLimit(query.limit))

/** The record of every transaction the gateway submitted. */
export class TransactionLog extends Context.Service<
  TransactionLog,
  {
    /**
     * Records a signed transaction before it is broadcast. Two standing records may share a hash: two requests that
     * signed the same operation (the later one is discarded when refused), or operations one bundle included.
     */
    readonly save: (record: TxRecord) => Effect.Effect<void, StoreUnavailable>
    readonly find: (id: string) => Effect.Effect<TxRecord | undefined, StoreUnavailable>
    /**
     * Every standing record whose user operation's hash, or whose including transaction's hash (known once saved or
     * settled with it), is `hash`, in any case, oldest first; empty when none is. One bundle transaction includes
     * several operations, of any app: it does not check who asks, the caller keeps the asker's records (their
     * `kind` and `owner`), as it does for {@link find}.
     */
    readonly findByHash: (hash: string) => Effect.Effect<ReadonlyArray<TxRecord>, StoreUnavailable>
    /**
     * Records how a submitted transaction ended, if it has not ended yet: the first settlement wins and a final
     * record never changes ({@link txTransitions}). True when this call settled it; false when the record was
     * already final, or is not there (never saved, or discarded).
     */
    readonly settle: (id: string, outcome: TxOutcome) => Effect.Effect<boolean, StoreUnavailable>
    /** Forgets a transaction the node never accepted (it cannot be mined). */
    readonly discard: (id: string) => Effect.Effect<void, StoreUnavailable>
    /**
     * The newest records first, for operators: among the newest {@link RECENT_SCAN_MAX} of the time window (of the
     * {@link RECENT_INDEX_MAX} newest saved), those of the owner and status asked, at most `limit`.
     */
    readonly recent: (query: RecentQuery) => Effect.Effect<ReadonlyArray<TxRecord>, StoreUnavailable>
  }
>()("@walletgate/core/TransactionLog") {
  /** Records in this process's memory. */
  static readonly memory: Layer.Layer<TransactionLog> = Layer.sync(TransactionLog, () => {
    const records = new Map<string, TxRecord>()
    // Every hash a record was saved or settled with → the ids saved or settled with it; a record that is gone or no
    // longer has the hash is skipped when read.
    const byHash = new Map<string, Set<string>>()
    const index = (id: string, hash: string | undefined) => {
      if (hash === undefined) return
      const ids = byHash.get(hash.toLowerCase()) ?? new Set<string>()
      byHash.set(hash.toLowerCase(), ids.add(id))
    }
    return TransactionLog.of({
      save: (record) =>
        Effect.sync(() => {
          records.set(record.id, record)
          index(record.id, record.userOpHash)
          index(record.id, record.txHash)
        }),
      find: (id) => Effect.sync(() => records.get(id)),
      findByHash: (hash) =>
        Effect.sync(() =>
          standingWithHash(
            [...(byHash.get(hash.toLowerCase()) ?? [])].map((id) => records.get(id)),
            hash
          )
        ),
      settle: (id, outcome) =>
        Effect.sync(() => {
          const record = records.get(id)
          if (record === undefined || isFinalStatus(record.status)) return false
          records.set(id, { ...record, ...outcome })
          if ("txHash" in outcome) index(id, outcome.txHash)
          return true
        }),
      discard: (id) =>
        Effect.sync(() => {
          records.delete(id)
        }),
      recent: (query) =>
        Effect.sync(() => {
          const since = query.since ?? Number.NEGATIVE_INFINITY
          const until = query.until ?? Number.POSITIVE_INFINITY
          const newest = [...records.values()]
            .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
            .slice(0, RECENT_INDEX_MAX)
            .filter((record) => record.createdAt >= since && record.createdAt <= until)
            .slice(0, RECENT_SCAN_MAX)
          return recentOf(newest, query)
        })
    })
  })
}
