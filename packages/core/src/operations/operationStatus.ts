import * as Effect from "effect/Effect"
import { type Address, getAbiItem, getAddress, type Hash, type Log, parseEventLogs } from "viem"
import { entryPoint07Abi, formatUserOperation, type RpcUserOperation } from "viem/account-abstraction"
import { type Network, rpc } from "../chain/networks"
import { count, gasSponsored, userOperations } from "../internal/telemetry"
import { isFinalStatus, TransactionLog, type TxOutcome, type TxRecord } from "../state/TransactionLog"
import { Bundler, type UserOperation07 } from "./Bundler"
import { SpendPolicy } from "./SpendPolicy"
import { canonicalSafe4337Contracts } from "./safeAccount"

// Where a recorded operation stands, read when asked (`UserOperations.status`), and re-sending it as it was.

/** How far back the node's logs are searched for an operation recorded without `sentAfterBlock`. */
const logSearchBlocks = 10_000n

/**
 * An operation prepared at most this many blocks ago is looked up in the node's logs alone, without the bundler's
 * receipt: a range any node searches at once, and the receipt would only point at the same event.
 */
const recentLogBlocks = 1_000n

const maxBigint = (a: bigint, b: bigint) => (a > b ? a : b)

const userOperationEvent = getAbiItem({ abi: entryPoint07Abi, name: "UserOperationEvent" })

/** The EntryPoint's `UserOperationEvent`s of operation `hash` among `logs`. */
const operationEvents = (logs: ReadonlyArray<Log>, entryPoint: Address, hash: Hash) =>
  parseEventLogs({ abi: entryPoint07Abi, eventName: "UserOperationEvent", logs: [...logs] }).filter(
    (event) =>
      event.args.userOpHash === hash &&
      getAddress(event.address) === getAddress(entryPoint) &&
      !event.removed &&
      event.blockNumber !== null &&
      event.transactionHash !== null
  ) as ReadonlyArray<IncludedEvent>

/** An operation's event in a mined block. */
type IncludedEvent = {
  readonly blockNumber: bigint
  readonly transactionHash: Hash
  readonly args: { readonly success: boolean; readonly actualGasUsed: bigint }
}

const facts = (record: TxRecord): { readonly txHash?: Hash; readonly blockNumber?: number } => ({
  ...(record.txHash === undefined ? {} : { txHash: record.txHash as Hash }),
  ...(record.blockNumber === undefined ? {} : { blockNumber: record.blockNumber })
})

/** Where a recorded operation stands, read when asked. */
export interface OperationStatus {
  /** The record, settled once the operation is final. */
  readonly record: TxRecord
  /** `submitted` until final: not yet included, included with too few confirmations, or reorged out (re-sent); see `TxStatus`. */
  readonly status: TxRecord["status"]
  /** The including transaction while it stands on the node's canonical chain. */
  readonly txHash?: Hash
  readonly blockNumber?: number
}

/** The pipeline's status reads and re-sends, over the `Bundler`, `TransactionLog` and `SpendPolicy`. */
export const operationStatusReader = Effect.gen(function* () {
  const bundler = yield* Bundler
  const log = yield* TransactionLog
  const spend = yield* SpendPolicy

  const storedOperation = (record: TxRecord): UserOperation07 | undefined =>
    record.userOperation === undefined
      ? undefined
      : (formatUserOperation(record.userOperation as unknown as RpcUserOperation<"0.7">) as UserOperation07)

  const resend = (record: TxRecord, network: Network) =>
    Effect.gen(function* () {
      const op = storedOperation(record)
      if (op === undefined || network.erc4337 === undefined) return
      const account = op.sender
      yield* bundler.sendUserOperation(network.chainId, op, canonicalSafe4337Contracts().entryPoint).pipe(
        Effect.catch((error) =>
          Effect.logDebug("walletgate: re-send refused").pipe(
            Effect.annotateLogs({
              network: network.slug,
              account,
              userOpHash: record.userOpHash,
              cause: error._tag === "BundlerRejected" ? error.message.slice(0, 120) : error._tag
            })
          )
        )
      )
    })

  /**
   * Where the operation is included on the node's canonical chain, if it is: the EntryPoint's event of the
   * operation in the node's logs from the block before it was prepared up to `head`. For an operation prepared
   * within {@link recentLogBlocks}, those logs alone answer (one read of the node). For an older one, first
   * where the bundler's receipt says (the node must still hold that transaction, with the operation's event in
   * it: a bundler's receipt can outlive a reorg, and a reorg can mine the same bundle in another block), then
   * the logs.
   */
  const inclusionOf = (record: TxRecord, hash: Hash, network: Network, head: bigint) =>
    Effect.gen(function* () {
      const entryPoint = canonicalSafe4337Contracts().entryPoint
      const from =
        record.sentAfterBlock === undefined ? maxBigint(0n, head - logSearchBlocks) : BigInt(record.sentAfterBlock)
      const searchLogs = rpc(network, "findOperation", () =>
        network.publicClient.getLogs({
          address: entryPoint,
          event: userOperationEvent,
          args: { userOpHash: hash },
          fromBlock: from,
          toBlock: head
        })
      ).pipe(Effect.map((logs) => operationEvents(logs, entryPoint, hash)[0]))
      if (record.sentAfterBlock !== undefined && head - from <= recentLogBlocks) return yield* searchLogs
      const receipt = yield* bundler
        .getUserOperationReceipt(network.chainId, hash)
        .pipe(
          Effect.catch((error) =>
            Effect.logDebug("walletgate: the bundler's receipt is unavailable; the node is asked").pipe(
              Effect.annotateLogs({ network: network.slug, userOpHash: hash, cause: error._tag }),
              Effect.as(undefined)
            )
          )
        )
      if (receipt !== undefined) {
        const onNode = yield* rpc(network, "confirm", () =>
          network.publicClient.getTransactionReceipt({ hash: receipt.receipt.transactionHash }).catch(() => undefined)
        )
        const event =
          onNode === undefined || onNode.blockNumber > head
            ? undefined
            : operationEvents(onNode.logs, entryPoint, hash)[0]
        if (event !== undefined) return event
      }
      return yield* searchLogs
    })

  /**
   * Whether the operation's EntryPoint nonce was used by another operation as of block `at`: then it can never
   * be included (`dropped`). Only an operation with a shared nonce key (a plan payout) can lose its nonce.
   */
  const nonceTaken = (record: TxRecord, network: Network, at: bigint) =>
    Effect.gen(function* () {
      const op = storedOperation(record)
      if (op === undefined) return false
      const key = op.nonce >> 64n
      const sequence = op.nonce & ((1n << 64n) - 1n)
      const next = yield* rpc(network, "getNonce", () =>
        network.publicClient.readContract({
          address: canonicalSafe4337Contracts().entryPoint,
          abi: entryPoint07Abi,
          functionName: "getNonce",
          args: [op.sender, key],
          blockNumber: at
        })
      )
      return (next & ((1n << 64n) - 1n)) > sequence
    })

  const status = (record: TxRecord, network: Network) =>
    Effect.gen(function* () {
      if (isFinalStatus(record.status) || record.userOpHash === undefined || network.erc4337 === undefined) {
        return { record, status: record.status, ...facts(record) }
      }
      const hash = record.userOpHash as Hash
      const confirmations = BigInt(network.erc4337.confirmations)
      // Every read below is pinned to one head, so that the event search and the nonce agree.
      const head = yield* rpc(network, "head", () => network.publicClient.getBlockNumber({ cacheTime: 0 }))
      const included = yield* inclusionOf(record, hash, network, head)
      if (included !== undefined) {
        const blockNumber = Number(included.blockNumber)
        if (head - included.blockNumber + 1n < confirmations) {
          return { record, status: "submitted" as const, txHash: included.transactionHash, blockNumber }
        }
        return yield* settle(record, {
          status: included.args.success ? "confirmed" : "reverted",
          blockNumber,
          gasUsed: included.args.actualGasUsed.toString(),
          txHash: included.transactionHash
        })
      }
      // Not on the canonical chain: never included yet, dropped by the bundler, or reorged out. The nonce is
      // read one block behind the last final one: a node may answer for its newest block's state before its
      // logs (anvil on interval mining did), which made an operation of that block look dropped by itself.
      const settledBlock = head - confirmations
      if (settledBlock >= 0n && (yield* nonceTaken(record, network, settledBlock))) {
        return yield* settle(record, { status: "dropped" })
      }
      // Pending: while the bundler holds it, it is the bundler's to include (resubmitting a dropped bundle, bumping
      // fees). Otherwise (the bundler lost it, or reports it included in a block the node no longer has: a
      // reorg) the same signed operation is sent again as it was (same hash); the EntryPoint runs it only once.
      const pending = yield* bundler.isPending(network.chainId, hash).pipe(Effect.catch(() => Effect.succeed(false)))
      if (!pending) yield* resend(record, network)
      return { record, status: "submitted" as const }
    })

  /** Settles `record` with `outcome` (the first settlement wins: a concurrent read may have settled it). */
  const settle = (record: TxRecord, outcome: TxOutcome) =>
    Effect.gen(function* () {
      const settled = yield* log.settle(record.id, outcome)
      // Counted by the read that settled it, once: a record settles once (TransactionLog.settle).
      if (settled) {
        yield* count(userOperations, { kind: record.kind, status: outcome.status })
        if (outcome.status !== "dropped" && record.gasHold !== undefined) {
          yield* count(gasSponsored, { "walletgate.app": record.owner }, Number(outcome.gasUsed))
        }
      }
      // Dropped: never included, so it cost nothing; only the read that settled it gives the gas back.
      if (settled && outcome.status === "dropped" && record.gasHold !== undefined) {
        yield* spend.release(record.gasHold)
      }
      const final: TxRecord = settled ? { ...record, ...outcome } : ((yield* log.find(record.id)) ?? record)
      return { record: final, status: final.status, ...facts(final) } satisfies OperationStatus
    })

  return { resend, status }
})
