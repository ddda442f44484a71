import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { type Address, getAddress } from "viem"
import { chainProblems } from "../chain/errors"
import type { Network } from "../chain/networks"
import type { ProblemMapping, Tagged } from "../internal/problem"
import { operationProblems } from "../operations/errors"
import { OperationLink } from "../operations/idempotency"
import type { AccountIdentity } from "../operations/identity"
import { mempoolLimited } from "../operations/outcomes"
import type { GasPayer, SpendPolicy } from "../operations/SpendPolicy"
import type { SafeAccount } from "../operations/safeAccount"
import type { OperationNonce, SubmitError, UserOperations } from "../operations/UserOperations"
import type { AccountLocks } from "../state/AccountLocks"
import { isFinalStatus, type TransactionLog, type TxRecord } from "../state/TransactionLog"
import { payoutProblems } from "./errors"
import { PLAN_PAYOUT_NONCE_KEY } from "./planning"
import type { PayoutOperation, Transfer } from "./schemas"
import { type PartRange, partCallGasFloor, partNonceKey, planPartNonceKey, transferKind } from "./split"
import { disperseCalls } from "./transfers"

// A payout larger than one operation may be (docs/paymagic.md, "Large payouts"): a manifest record (its transfers and
// how they are split) saved before any part is sent, and one record per part under an id derived from the payout's,
// each part signed on its own EntryPoint nonce key (`partNonceKey`). A part is signed only by whoever holds its lock
// and finds no record of it; a part whose record stands is never signed again, only re-sent as recorded.

/** The details of a payout's manifest record: what it pays and how it is split. */
export interface ManifestDetails {
  readonly transfers: ReadonlyArray<Transfer>
  readonly parts: ReadonlyArray<PartRange>
  /** A plan payout's turn: the sequence its part 0 takes on the account's plan payout nonce key (decimal). */
  readonly turn?: string
}

/**
 * The nonce of part `index` of the payout: an explicit payout's parts each on a key derived from its id; a plan
 * payout's part 0 on the plan payout key at its turn (the turn moves on once it executes), its other parts on keys
 * derived from the account and the turn. Each at a sequence it can take once.
 */
const partNonce = (manifest: TxRecord, index: number): OperationNonce => {
  const { turn } = manifest.details as unknown as ManifestDetails
  if (turn === undefined) return { key: partNonceKey(manifest.id, index), sequence: 0n }
  if (index === 0) return { key: PLAN_PAYOUT_NONCE_KEY, sequence: BigInt(turn) }
  return { key: planPartNonceKey(getAddress(manifest.account), BigInt(turn), index), sequence: 0n }
}

/** Whether part 0 of a plan payout's turn was refused for good: the turn was not taken, and nothing else is sent. */
const turnRefused = (manifest: TxRecord, outcome: PartOutcome): boolean =>
  manifest.details.turn !== undefined &&
  (outcome._tag === "Failed" || (outcome._tag === "Recorded" && outcome.record.details.failure !== undefined))

/** Whether `record` is a split payout's manifest. */
export const isManifest = (record: TxRecord): boolean => Array.isArray(record.details.parts)

/** The id of part `index` of payout `payoutId`'s record. */
const partRecordId = (payoutId: string, index: number): string => `${payoutId}:part:${index}`

/** The payout a part's record belongs to, if it is one. */
export const payoutOfPart = (record: TxRecord): string | undefined =>
  typeof record.details.payout === "string" ? record.details.payout : undefined

/** What sending a split payout's parts needs. */
export interface PartsContext {
  readonly manifest: TxRecord
  readonly network: Network
  readonly identity: AccountIdentity
  readonly safe: SafeAccount
  readonly payer: GasPayer
}

/** Why a part's submission failed: what the pipeline's submission fails with. */
export type PartError = SubmitError

/**
 * Where one part stands after a send attempt: its record (found, or made now), refused for good (`Failed`: its
 * record says why, nothing was sent), or not sent for a reason a retry can change (`Unsent`).
 */
export type PartOutcome =
  | { readonly _tag: "Recorded"; readonly record: TxRecord }
  | { readonly _tag: "Failed"; readonly record: TxRecord; readonly error: PartError }
  | { readonly _tag: "Unsent"; readonly error: PartError }

/**
 * Whether the bundler refused a part because its mempool already holds as many of the account's operations as it
 * takes from one sender (ERC-7562 limits an unstaked sender to a few; alto: `--mempool-max-parallel-ops`, answered
 * -32602 "AA25 invalid account nonce: Maximum number of parallel user operations …"): not the part's fault, and the
 * inclusion of the account's earlier operations changes it.
 */
export const mempoolFull = (error: PartError): boolean => error._tag === "BundlerBusy" && mempoolLimited(error.message)

/** Why a part failed before anything was sent, as its problem says it, with the transfer it names. */
const reasonOf = (error: PartError, range: PartRange): PayoutOperation["reason"] | undefined => {
  // Waiting changes it: not final (the part stays unsent).
  if (mempoolFull(error)) return undefined
  const table = { ...chainProblems, ...operationProblems, ...payoutProblems } as unknown as Readonly<
    Record<string, ProblemMapping<Tagged>>
  >
  const mapping = table[error._tag]
  // Retrying can change a 409 (another request holds the key), a 429 (a budget's window) and any 5xx: not final.
  if (mapping === undefined || mapping.status >= 500 || mapping.status === 409 || mapping.status === 429) {
    return undefined
  }
  const index = mapping.extensions?.(error).index
  return {
    code: mapping.code,
    detail: mapping.detail(error),
    ...(typeof index === "number" && index >= 0 ? { transfer: range.from + index } : {})
  }
}

/** The pipeline's services the parts are sent with. */
export interface PartServices {
  readonly operations: UserOperations["Service"]
  readonly log: TransactionLog["Service"]
  readonly locks: AccountLocks["Service"]
  readonly spend: SpendPolicy["Service"]
}

/** How long one part's lock is held at most (a holder that died frees it after this, on a shared store). */
const PART_LOCK_MS = 120_000

/**
 * Sends part `index` of the payout unless its record stands: found → its record (no lock needed); not found, under
 * the part's lock, looked up again, then signed on the part's own nonce, recorded under its derived id and sent. A refusal retrying cannot change (a reverting
 * recipient, the ceiling) is recorded as the part's final failure with its reason; any other failure leaves it unsent.
 */
const sendPart = (
  services: PartServices,
  context: PartsContext,
  index: number,
  /** False: a part over the gas ceiling stays unsent, to be estimated again (see {@link sendParts}). */
  ceilingFinal = true
) =>
  Effect.gen(function* () {
    const { manifest, network } = context
    const details = manifest.details as unknown as ManifestDetails
    const range = details.parts[index] as PartRange
    const id = partRecordId(manifest.id, index)
    // A part recorded is never signed again: found without its lock, which a process that died while sending it
    // (after recording it) would hold until it expires.
    const recorded = yield* services.log.find(id)
    if (recorded !== undefined) return { _tag: "Recorded", record: recorded } satisfies PartOutcome
    const lock = yield* services.locks.acquire(`payout-part:${id}`, PART_LOCK_MS)
    return yield* Effect.gen(function* () {
      const existing = yield* services.log.find(id)
      if (existing !== undefined) return { _tag: "Recorded", record: existing } satisfies PartOutcome
      const transfers = details.transfers.slice(range.from, range.to).map((transfer) => ({
        asset: getAddress(transfer.asset) as Address,
        recipient: getAddress(transfer.recipient) as Address,
        amount: BigInt(transfer.amount)
      }))
      const partDetails = { payout: manifest.id, part: index, from: range.from, to: range.to }
      const link = yield* OperationLink
      const sent = yield* services.operations
        .submit({
          network,
          identity: context.identity,
          account: context.safe,
          intent: { calls: disperseCalls(transfers), kind: "payout", owner: manifest.owner, details: partDetails },
          spender: context.payer,
          nonce: partNonce(manifest, index),
          recordId: id,
          // Whatever the bundler's estimate: it may have been taken after an earlier part warmed what this one touches.
          callGasFloor: partCallGasFloor(transfers.map(transferKind))
        })
        .pipe(
          // Every part links the request's key to the payout (its manifest), never to the part: a retry answers the
          // whole payout. Linking is also the check that the key is still this request's before each part is sent.
          Effect.provideService(OperationLink, {
            link: (operation) => link.link({ id: manifest.id, txHash: operation.txHash })
          }),
          Effect.result
        )
      if (Result.isSuccess(sent)) return { _tag: "Recorded", record: sent.success } satisfies PartOutcome
      const error = sent.failure
      const reason = !ceilingFinal && error._tag === "GasCeilingExceeded" ? undefined : reasonOf(error, range)
      if (reason === undefined) return { _tag: "Unsent", error } satisfies PartOutcome
      // Final: recorded so that a retry answers the same payout and never sends this part (nothing of it was sent).
      const failed: TxRecord = {
        id,
        kind: "payout",
        owner: manifest.owner,
        network: manifest.network,
        chainId: manifest.chainId,
        account: manifest.account,
        status: "dropped",
        createdAt: manifest.createdAt,
        details: { ...partDetails, failure: reason }
      }
      yield* services.log.save(failed)
      return { _tag: "Failed", record: failed, error } satisfies PartOutcome
    }).pipe(Effect.ensuring(lock.release))
  })

/**
 * How long one request waits in all for the inclusion of its payout's parts when the bundler's mempool holds as many
 * of the account's operations as it takes ({@link mempoolFull}); past it the rest stay unsent for a retry to send.
 */
const MEMPOOL_WAIT_MS = 20_000

/** How often a part waiting for a place in the bundler's mempool reads whether an earlier part was included. */
const INCLUSION_POLL_MS = 1_000

/**
 * Waits until one of `pending` (parts this request sent) is included or final, within `deadline` (epoch ms): true
 * when one is (it is taken out of `pending`), false when none is pending or the time is up. A status that cannot be
 * read counts as still pending.
 */
const awaitInclusion = (services: PartServices, network: Network, pending: Array<TxRecord>, deadline: number) =>
  Effect.gen(function* () {
    while (pending.length > 0) {
      for (const [at, record] of pending.entries()) {
        const now = yield* services.operations.status(record, network).pipe(Effect.option)
        if (now._tag === "Some" && (isFinalStatus(now.value.status) || now.value.txHash !== undefined)) {
          pending.splice(at, 1)
          return true
        }
      }
      if ((yield* Clock.currentTimeMillis) + INCLUSION_POLL_MS > deadline) return false
      yield* Effect.sleep(INCLUSION_POLL_MS)
    }
    return false
  })

/**
 * Sends every part of the payout not recorded yet, one after the other, in order (each on its own nonce key, so none
 * waits for another's inclusion); stops at the first part that could not be sent for a reason a retry can change.
 * A part the bundler refuses for its per-sender mempool limit is sent again once an earlier part this request sent
 * is included, within {@link MEMPOOL_WAIT_MS} in all; past it, or with none of this request's parts pending, it
 * stays unsent.
 */
export const sendParts = (services: PartServices, context: PartsContext) =>
  Effect.gen(function* () {
    const details = context.manifest.details as unknown as ManifestDetails
    const outcomes: Array<PartOutcome> = []
    const pending: Array<TxRecord> = []
    const deadline = (yield* Clock.currentTimeMillis) + MEMPOOL_WAIT_MS
    for (const index of details.parts.keys()) {
      // A bundler's estimate of a part taken while earlier parts of the same sender wait in its mempool was seen at
      // twice the part's gas (6.96 M for 87 native transfers counted 3.5 M, over the ceiling): such a part is
      // estimated again once an earlier part is included, and refused for good only if it is still over (a recipient
      // that needs more gas than counted).
      let outcome = yield* sendPart(services, context, index, pending.length === 0)
      while (
        outcome._tag === "Unsent" &&
        (mempoolFull(outcome.error) || outcome.error._tag === "GasCeilingExceeded") &&
        (yield* awaitInclusion(services, context.network, pending, deadline))
      ) {
        outcome = yield* sendPart(services, context, index, outcome.error._tag !== "GasCeilingExceeded")
      }
      if (outcome._tag === "Unsent" && outcome.error._tag === "GasCeilingExceeded") {
        outcome = yield* sendPart(services, context, index)
      }
      outcomes.push(outcome)
      if (outcome._tag === "Recorded" && outcome.record.status === "submitted") pending.push(outcome.record)
      if (outcome._tag === "Unsent" || (index === 0 && turnRefused(context.manifest, outcome))) break
    }
    return outcomes
  })

/** Where each part of the payout stands now: read when asked (each submitted part's operation re-sent if lost). */
export const partsNow = (services: PartServices, manifest: TxRecord, network: Network | undefined) =>
  Effect.forEach(
    (manifest.details as unknown as ManifestDetails).parts.entries(),
    ([index, range]) =>
      Effect.gen(function* () {
        const record = yield* services.log.find(partRecordId(manifest.id, index))
        if (record === undefined) return { index, ...range, status: "unsent" } satisfies PayoutOperation
        const failure = record.details.failure as PayoutOperation["reason"] | undefined
        if (failure !== undefined) {
          return { index, ...range, status: "failed", reason: failure } satisfies PayoutOperation
        }
        const now =
          network === undefined || isFinalStatus(record.status)
            ? { status: record.status, txHash: record.txHash }
            : yield* services.operations.status(record, network)
        return {
          index,
          ...range,
          ...(record.userOpHash === undefined ? {} : { userOpHash: record.userOpHash }),
          status: now.status,
          ...(now.txHash === undefined ? {} : { txHash: now.txHash })
        } satisfies PayoutOperation
      }),
    { concurrency: 4 }
  )
