import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { StoreUnavailable } from "./errors"

/** Where a submitted transaction stands. */
export const TxStatus = Schema.Literals(["submitted", "confirmed", "reverted"])
/** Where a submitted transaction stands. */
export type TxStatus = typeof TxStatus.Type

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
  readonly status: TxStatus
  readonly blockNumber?: number
  readonly gasUsed?: string
  readonly createdAt: number
  /** What the answer shows beyond the common fields (the userId, the transfers, …). */
  readonly details: Readonly<Record<string, unknown>>
}

/** The outcome of a transaction, once mined. */
export interface TxOutcome {
  readonly status: "confirmed" | "reverted"
  readonly blockNumber: number
  readonly gasUsed: string
  /** The including transaction, for a user operation (its hash is known only once included). */
  readonly txHash?: string
}

/** The record of every transaction the gateway submitted. */
export class TransactionLog extends Context.Service<
  TransactionLog,
  {
    /** Records a signed transaction before it is broadcast. */
    readonly save: (record: TxRecord) => Effect.Effect<void, StoreUnavailable>
    readonly find: (id: string) => Effect.Effect<TxRecord | undefined, StoreUnavailable>
    /** Records how a submitted transaction ended. */
    readonly settle: (id: string, outcome: TxOutcome) => Effect.Effect<void, StoreUnavailable>
    /** Forgets a transaction the node never accepted (it cannot be mined). */
    readonly discard: (id: string) => Effect.Effect<void, StoreUnavailable>
  }
>()("@walletgate/core/TransactionLog") {
  /** Records in this process's memory. */
  static readonly memory: Layer.Layer<TransactionLog> = Layer.sync(TransactionLog, () => {
    const records = new Map<string, TxRecord>()
    return TransactionLog.of({
      save: (record) =>
        Effect.sync(() => {
          records.set(record.id, record)
        }),
      find: (id) => Effect.sync(() => records.get(id)),
      settle: (id, outcome) =>
        Effect.sync(() => {
          const record = records.get(id)
          if (record !== undefined) records.set(id, { ...record, ...outcome })
        }),
      discard: (id) =>
        Effect.sync(() => {
          records.delete(id)
        })
    })
  })
}
