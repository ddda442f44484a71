import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import { getAddress, type LocalAccount } from "viem"
import { formatUserOperationRequest } from "viem/account-abstraction"
import { type ChainUnavailable, UnsupportedChain } from "../chain/errors"
import type { Network } from "../chain/networks"
import { count, userOperations } from "../internal/telemetry"
import { randomUuid, SecureRandom } from "../random/SecureRandom"
import { AccountLocks } from "../state/AccountLocks"
import type { StoreUnavailable } from "../state/errors"
import type { GasHold } from "../state/GasLedger"
import type { IdempotencyInFlight } from "../state/IdempotencyStore"
import { TransactionLog, type TxRecord } from "../state/TransactionLog"
import { Bundler, type BundlerError } from "./Bundler"
import {
  AccountDeploying,
  BundlerRejected,
  type CallReverted,
  type GasBudgetExhausted,
  type GasCeilingExceeded,
  GasPriceAboveCap
} from "./errors"
import { OperationLink } from "./idempotency"
import type { AccountIdentity } from "./identity"
import { awaitDeployment, inspect, isDeployed } from "./inspection"
import { KeyVault } from "./KeyVault"
import { type OperationStatus, operationStatusReader } from "./operationStatus"
import type { PaymasterServiceError } from "./paymasterService"
import { type GasPayer, SpendPolicy } from "./SpendPolicy"
import { identitySafe, type SafeAccount, type SafeCall } from "./safeAccount"
import { type AccountChainState, capFees, prepareSafeOperation, randomNonceKey, sponsorOf } from "./safeOperation"

/** What an operation records besides the chain facts. */
export interface OperationIntent {
  readonly calls: ReadonlyArray<SafeCall>
  readonly kind: TxRecord["kind"]
  /** Who may read the record: the app's client id, or the API key's id. */
  readonly owner: string
  readonly details: TxRecord["details"]
}

/** A fixed EntryPoint nonce for an operation: its 192-bit key and the sequence on it. */
export interface OperationNonce {
  readonly key: bigint
  readonly sequence: bigint
}

/** What {@link UserOperations} `submit` is given. */
export interface SubmitOptions {
  readonly network: Network
  /** Whose KeyVault key signs (and, without `account`, whose Safe sends). */
  readonly identity: AccountIdentity
  /**
   * The Safe that sends, when it is not the identity's own single-owner Safe (e.g. an automation account with the
   * customer's key as a second owner); the identity's key must be one of its owners, with a threshold of 1.
   */
  readonly account?: SafeAccount
  readonly intent: OperationIntent
  /**
   * Who the operation's gas is charged to. The pipeline applies the spend policy itself: the gas the calls used when
   * simulated, a lower bound of the operation's, is checked against the ceiling before anything is estimated; the
   * operation's gas ceiling is reserved in the spender's budgets before anything is sponsored or signed, kept in the
   * record and given back if the bundler refuses the operation or it is dropped.
   */
  readonly spender: GasPayer
  /**
   * A fixed nonce instead of a fresh random key: operations given the same nonce share one EntryPoint slot, so at
   * most one of them can ever execute.
   */
  readonly nonce?: OperationNonce
  /**
   * The record's id instead of a random one (a payout's part, found again by it): the caller makes sure that no other
   * submission uses it at the same time.
   */
  readonly recordId?: string
  /**
   * The least call gas the operation is signed with, whatever the bundler's estimate (a payout's counted gas); the
   * pipeline's own floor from its simulation of the calls (`batchCallGasFloor`) applies too, the larger one wins.
   */
  readonly callGasFloor?: bigint
}

/** Settings of {@link UserOperations.layer}. */
export interface UserOperationsOptions {
  /**
   * The longest a request that deploys a Safe holds the account's deploy lock while waiting for its operation to be
   * included; default 30 s. Past it the lock is freed and the request answers (its operation stands as submitted).
   */
  readonly deployWaitMs?: number
}

/** Why a submission failed before its operation stood as sent: the pipeline's errors and the spend policy's. */
export type SubmitError =
  | GasCeilingExceeded
  | GasBudgetExhausted
  | CallReverted
  | ChainUnavailable
  | GasPriceAboveCap
  | AccountDeploying
  | UnsupportedChain
  | BundlerError
  | PaymasterServiceError
  | StoreUnavailable
  | IdempotencyInFlight

/**
 * The ERC-4337 pipeline, stateless per request: each operation is prepared (Safe batch, random nonce key, gas,
 * fees), approved by the caller's spend check, sponsored, signed, recorded and linked to the Idempotency-Key
 * before it is sent to the bundler, and the call returns as soon as the bundler has it. Its status is read when
 * asked, confirmed on the node. Nothing runs, waits or holds a lock after the call returns.
 */
export class UserOperations extends Context.Service<
  UserOperations,
  {
    /** The Safe of `identity` (its address is known before it is deployed). */
    readonly accountOf: (identity: AccountIdentity) => Effect.Effect<SafeAccount>
    /**
     * Sends `intent.calls` atomically from the Safe of `identity`. A batch that would revert fails with
     * `CallReverted` (the failing call's index and reason) and nothing is signed; the spend policy reserves the
     * operation's gas ceiling for `spender` before anything is sponsored or signed. The first operation of an
     * undeployed Safe is sent alone: concurrent ones wait (bounded) for its inclusion.
     */
    readonly submit: (options: SubmitOptions) => Effect.Effect<TxRecord, SubmitError>
    /** Re-sends the recorded signed operation as it was (same hash); refusals (already known, already included) are ignored. */
    readonly resend: (record: TxRecord, network: Network) => Effect.Effect<void>
    /**
     * Where `record` stands, read now, inside the caller's request (the one status read of the kernel and payout
     * routes): the operation's event in the node's logs (for an old operation, where the bundler's receipt says,
     * confirmed on the node first), with the network's confirmations.
     * Final outcomes (`confirmed`, `reverted`, `dropped` when another operation used its nonce) are settled in the
     * log once, the first read wins; an operation not on the chain (not yet included, dropped by the bundler, or
     * reorged out) is re-sent as it was (same hash) and stays `submitted`. Nothing runs after it returns.
     */
    readonly status: (
      record: TxRecord,
      network: Network
    ) => Effect.Effect<OperationStatus, ChainUnavailable | StoreUnavailable>
  }
>()("@walletgate/core/UserOperations") {
  /** The pipeline over the `Bundler`, `KeyVault`, `TransactionLog` and `AccountLocks` ports. */
  static readonly layer = (options: UserOperationsOptions = {}) =>
    Layer.effect(
      UserOperations,
      Effect.gen(function* () {
        const bundler = yield* Bundler
        const vault = yield* KeyVault
        const log = yield* TransactionLog
        const locks = yield* AccountLocks
        const random = yield* SecureRandom
        const spend = yield* SpendPolicy
        const deployWaitMs = options.deployWaitMs ?? 30_000

        const newRecordId = Effect.provideService(randomUuid, SecureRandom, random)
        const { resend, status } = yield* operationStatusReader

        const accountOf = (identity: AccountIdentity) =>
          vault.owner(identity).pipe(Effect.map((owner) => identitySafe(owner.address, identity)))

        const settingsOf = (network: Network) =>
          network.erc4337 === undefined
            ? Effect.fail(new UnsupportedChain({ chain: network.slug }))
            : Effect.succeed(network.erc4337)

        const send = (
          network: Network,
          owner: LocalAccount,
          account: SafeAccount,
          state: AccountChainState,
          intent: OperationIntent,
          /** Who pays, the fixed nonce (if any) and the call gas floor (if any), as submitted. */
          submitted: Pick<SubmitOptions, "spender" | "nonce" | "callGasFloor">,
          /** The record's id and the operation's nonce when the caller chose them (see {@link RecordSlot}). */
          recordAs?: RecordSlot
        ) =>
          Effect.gen(function* () {
            const { spender, nonce, callGasFloor } = submitted
            const settings = yield* settingsOf(network)
            const fees = capFees(state.fees, state.baseFeePerGas, settings.feeCaps)
            if (fees === undefined) return yield* new GasPriceAboveCap({ network: network.slug })
            const opNonce = nonce ?? recordAs?.nonce
            const sponsor = sponsorOf(network, settings.sponsor)
            let hold: GasHold | undefined
            const prepared = yield* prepareSafeOperation({
              chainId: network.chainId,
              account,
              calls: intent.calls,
              deployed: state.deployed,
              fees,
              signers: [owner],
              ...(opNonce === undefined ? {} : { nonceKey: opNonce.key, nonceSequence: opNonce.sequence }),
              ...(sponsor === undefined ? {} : { sponsor }),
              ...(callGasFloor === undefined ? {} : { callGasFloor }),
              // The spend policy, before anything is sponsored or signed: a refusal costs nothing.
              approveGas: (gas: bigint) =>
                spend.reserve(network, spender, gas).pipe(
                  Effect.tap((held) =>
                    Effect.sync(() => {
                      hold = held
                    })
                  ),
                  Effect.asVoid
                )
            }).pipe(
              Effect.provideService(Bundler, bundler),
              // Refused after the reservation (a paymaster service's final data): nothing was signed, so nothing is held.
              Effect.tapError(() => (hold === undefined ? Effect.void : spend.release(hold).pipe(Effect.ignore)))
            )
            // Not sent after all (a store fault, or the bundler's refusal): it costs nothing, so its gas is given back.
            const giveBack = hold === undefined ? Effect.void : spend.release(hold).pipe(Effect.ignore)
            // On a shared nonce (a plan payout) another request may have signed this very operation: same calls, nonce,
            // gas and fees, so the same hash. The EntryPoint runs it once, so it is one record: this request is
            // answered with the one already made, its reservation given back (docs/decisions.md).
            if (nonce !== undefined) {
              // One request at a time looks up, records and sends an operation of a shared nonce, until the bundler
              // answers: a request that signed the same operation waits, then finds the record only if its send stood
              // (a refused one is discarded before the lock is freed), so no answer names a record that is then
              // discarded. Held for one bundler call at most; another operation's hash is another lock.
              yield* Effect.acquireRelease(
                locks
                  .acquire(`operation:${network.chainId}:${prepared.hash}`, settings.bundlerTimeoutMs + 10_000)
                  .pipe(Effect.tapError(() => giveBack)),
                (lock) => lock.release
              )
              const same = (yield* log.findByHash(prepared.hash).pipe(Effect.tapError(() => giveBack))).find(
                (record) =>
                  record.userOpHash === prepared.hash && record.kind === intent.kind && record.owner === intent.owner
              )
              if (same !== undefined) {
                yield* giveBack
                yield* (yield* OperationLink).link({ id: same.id, txHash: prepared.hash })
                return same
              }
            }
            const id = recordAs?.id ?? (yield* newRecordId)
            const now = yield* Clock.currentTimeMillis
            const record: TxRecord = {
              id,
              kind: intent.kind,
              owner: intent.owner,
              network: network.slug,
              chainId: network.chainId,
              account: account.address,
              userOpHash: prepared.hash,
              // Every field of a v0.7 operation in JSON-RPC form is a hex string (no EIP-7702 authorization here).
              userOperation: formatUserOperationRequest(prepared.op) as unknown as Readonly<Record<string, string>>,
              sentAfterBlock: Number(state.blockNumber),
              ...(hold === undefined ? {} : { gasHold: hold }),
              status: "submitted",
              createdAt: now,
              details: intent.details
            }
            // Recorded before it is sent: a crash after this line leaves a record, and re-sending the same signed
            // operation can execute it only once (the EntryPoint's nonce).
            yield* log.save(record).pipe(Effect.tapError(() => giveBack))
            // Linked to the request's Idempotency-Key before it is sent; if it cannot be linked, nothing is sent. Signed
            // again after AA10 (same record id), it is linked again: the key then names the hash actually sent.
            yield* (yield* OperationLink)
              .link({ id, txHash: prepared.hash })
              .pipe(Effect.tapError(() => log.discard(id).pipe(Effect.ignore, Effect.andThen(giveBack))))
            const sent = yield* bundler
              .sendUserOperation(network.chainId, prepared.op, account.contracts.entryPoint)
              .pipe(Effect.result)
            if (Result.isFailure(sent)) {
              if (sent.failure._tag !== "BundlerUnavailable") {
                // The bundler refused it: it was not accepted, so it cannot be included by this send.
                yield* log.discard(id)
                yield* giveBack
                return yield* sent.failure
              }
              // No answer: it may have been accepted. It stands as submitted (counted so); reading its status re-sends it.
              yield* Effect.logWarning(
                "walletgate: the bundler's answer is lost; the operation stands as submitted"
              ).pipe(
                Effect.annotateLogs({ network: network.slug, userOpHash: prepared.hash, cause: sent.failure.cause })
              )
            }
            yield* Effect.annotateCurrentSpan("walletgate.user_op_hash", prepared.hash)
            yield* count(userOperations, { kind: record.kind, status: "submitted" })
            return record
          }).pipe(Effect.scoped)

        const submit = (requested: SubmitOptions) =>
          Effect.gen(function* () {
            const { network, identity, intent } = requested
            yield* settingsOf(network)
            const owner = yield* vault.owner(identity)
            const account = requested.account ?? identitySafe(owner.address, identity)
            if (!account.owners.includes(getAddress(owner.address)) || account.threshold !== 1) {
              // A caller's bug: the identity's key alone must be able to sign for the Safe it names.
              return yield* Effect.die(new Error("the Safe is not one the identity's key signs for alone"))
            }
            const inspected = yield* inspect(network, account, intent.calls)
            const { state, executionGas } = inspected
            // Before any estimate: an operation too large to estimate (a bundler may fail on it) is refused here.
            yield* spend.checkCeiling(network, requested.spender, executionGas)
            // Signed with at least the call gas the calls need in the chain's state now, whatever the bundler estimated
            // after simulating the operations pending in its mempool (any tenant's): they may execute after this one.
            const callGasFloor =
              requested.callGasFloor === undefined || requested.callGasFloor < inspected.callGasFloor
                ? inspected.callGasFloor
                : requested.callGasFloor
            const submission: SubmitOptions = { ...requested, callGasFloor }
            const fixedId =
              submission.recordId === undefined
                ? undefined
                : { id: submission.recordId, nonce: submission.nonce ?? { key: randomNonceKey(), sequence: 0n } }
            if (state.deployed) return yield* send(network, owner, account, state, intent, submission, fixedId)
            // An undeployed Safe: its deploying operation must go alone (another one carrying the same initCode is
            // refused with AA10). The deploy lock is held only inside this request, at most `deployWaitMs`.
            const lock = yield* locks.acquire(`deploy:${network.chainId}:${account.address}`, deployWaitMs + 10_000)
            return yield* Effect.gen(function* () {
              const deployed = yield* isDeployed(network, account.address)
              if (deployed) {
                yield* lock.release
                return yield* send(network, owner, account, { ...state, deployed }, intent, submission, fixedId)
              }
              const recordAs: RecordSlot = fixedId ?? {
                id: yield* newRecordId,
                nonce: submission.nonce ?? { key: randomNonceKey(), sequence: 0n }
              }
              const record = yield* send(network, owner, account, state, intent, submission, recordAs).pipe(
                Effect.catch((refusal) =>
                  Effect.gen(function* () {
                    // AA10: the Safe was deployed (or another deploying operation waits in the bundler) after it was
                    // read; this deploying operation can never be valid. Once the Safe has code, the same calls are
                    // signed again without the deployment, under the same record id (linked again to the
                    // Idempotency-Key, with the new hash) and the same nonce. Safe from double-sending: the refused operation was never
                    // accepted by the bundler (its record was discarded), so the new one is the only one that can
                    // execute; and both carry one nonce, which the EntryPoint uses once.
                    const aa10 = refusal instanceof BundlerRejected && /\bAA10\b/.test(refusal.message)
                    if (!aa10) return yield* Effect.fail(refusal)
                    // Still no code: the deployment has not landed yet, and a retry can pass once it has (503, not a
                    // final 4xx). Nothing stands as sent: the refused operation's record was discarded.
                    if (!(yield* awaitDeployment(network, account.address, deployWaitMs))) {
                      return yield* new AccountDeploying({ network: network.slug })
                    }
                    yield* Effect.logInfo("walletgate: the Safe was deployed meanwhile; signed again without it").pipe(
                      Effect.annotateLogs({ network: network.slug, account: account.address })
                    )
                    return yield* send(
                      network,
                      owner,
                      account,
                      { ...state, deployed: true },
                      intent,
                      submission,
                      recordAs
                    )
                  })
                )
              )
              yield* awaitDeployment(network, account.address, deployWaitMs)
              return record
            }).pipe(Effect.ensuring(lock.release))
          })

        return UserOperations.of({ accountOf, submit, resend, status })
      })
    )
}

/**
 * The record id and nonce chosen for a deploying operation before it is prepared, so that, refused with AA10, the same
 * calls are signed again under them (and the request's Idempotency-Key linked again to the same record, with the new
 * operation's hash).
 */
interface RecordSlot {
  readonly id: string
  readonly nonce: OperationNonce
}
