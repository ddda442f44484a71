import type { OperationStatus } from "../operations/operationStatus"
import type { TxRecord } from "../state/TransactionLog"
import { type AssetAmount, automateStatuses, type PayoutOperation, type PayoutResponse, type Transfer } from "./schemas"
import { payoutStatusOf } from "./status"
import { inTokens } from "./transfers"

/** What every payout answer shows of its record: the account, the transfers, the totals and the remainder. */
const common = (record: TxRecord) => ({
  id: record.id,
  network: record.network,
  account: record.account,
  transfers: (record.details.transfers as ReadonlyArray<Transfer>).map(inTokens),
  totals: (record.details.totals as ReadonlyArray<AssetAmount>).map(inTokens),
  remainder: (record.details.remainder as ReadonlyArray<AssetAmount>).map(inTokens)
})

/** The payout view of a payout of one operation (its record), with where it stands when that was read (`status`). */
export const payoutView = (record: TxRecord, status?: OperationStatus): PayoutResponse => {
  const txHash = status?.txHash ?? record.txHash
  const blockNumber = status?.blockNumber ?? record.blockNumber
  const now = status?.status ?? record.status
  const transfers = record.details.transfers as ReadonlyArray<Transfer>
  return {
    ...common(record),
    userOpHash: record.userOpHash ?? "",
    hash: record.userOpHash ?? "",
    status: now,
    meta: { status: automateStatuses[now] },
    operations: [
      {
        index: 0,
        from: 0,
        to: transfers.length,
        ...(record.userOpHash === undefined ? {} : { userOpHash: record.userOpHash }),
        status: now,
        ...(txHash === undefined ? {} : { txHash })
      }
    ],
    ...(txHash === undefined ? {} : { txHash }),
    ...(blockNumber === undefined ? {} : { blockNumber }),
    ...(record.gasUsed === undefined ? {} : { gasUsed: record.gasUsed })
  }
}

/**
 * The payout view of a split payout (its manifest) and its operations as they stand: `hash` and `userOpHash` are the
 * first operation's (the first signed one, when the first failed before it was sent), `txHash` its transaction's.
 */
export const splitPayoutView = (manifest: TxRecord, operations: ReadonlyArray<PayoutOperation>): PayoutResponse => {
  const status = payoutStatusOf(operations.map((operation) => operation.status))
  const first = operations.find((operation) => operation.userOpHash !== undefined)
  return {
    ...common(manifest),
    userOpHash: first?.userOpHash ?? "",
    hash: first?.userOpHash ?? "",
    status,
    meta: { status: automateStatuses[status] },
    operations,
    ...(first?.txHash === undefined ? {} : { txHash: first.txHash })
  }
}
