import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import { type Address, getAbiItem, getAddress, type Hash, type Log, parseEventLogs } from "viem"
import {
  entryPoint07Abi,
  formatUserOperation,
  formatUserOperationRequest,
  type RpcUserOperation
} from "viem/account-abstraction"
import { type ChainUnavailable, UnsupportedChain } from "../chain/errors"
import { type Erc4337Settings, type Network, rpc, withinDeadline } from "../chain/networks"
import { count, gasSponsored, userOperations } from "../internal/telemetry"
import { randomUuid, SecureRandom } from "../random/SecureRandom"
import { AccountLocks } from "../state/AccountLocks"
import type { StoreUnavailable } from "../state/errors"
import type { GasHold } from "../state/GasLedger"
import type { IdempotencyInFlight } from "../state/IdempotencyStore"
import { isFinalStatus, TransactionLog, type TxOutcome, type TxRecord } from "../state/TransactionLog"
import { Bundler, type BundlerError, type UserOperation07 } from "./Bundler"
import { AccountDeploying, BundlerRejected, CallReverted, GasPriceAboveCap } from "./errors"
import { OperationLink } from "./idempotency"
import { type AccountIdentity, accountSalt } from "./identity"
import { KeyVault } from "./KeyVault"
import { haltedReason, insufficientBalanceReason } from "./outcomes"
import { type PaymasterServiceError, paymasterServiceClient } from "./paymasterService"
import { decodeRevertReason } from "./revertReason"
import { SpendPolicy } from "./SpendPolicy"
import { canonicalSafe4337Contracts, type SafeAccount, type SafeCall, safeAccount } from "./safeAccount"
import {
  type AccountChainState,
  capFees,
  type OperationSponsor,
  prepareSafeOperation,
  randomNonceKey,
  readAccountChainState,
  simulateBatch
} from "./safeOperation"

/** What an operation records besides the chain facts. */
export interface OperationIntent {
  readonly calls: ReadonlyArray<SafeCall>
  readonly kind: TxRecord["kind"]
  /** Who may read the record: the app's client id, or the API key's id. */
  readonly owner: string
  readonly details: TxRecord["details"]
}

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

/** A fixed EntryPoint nonce for an operation: its 192-bit key and the sequence on it. */
export interface OperationNonce {
  readonly key: bigint
  readonly sequence: bigint
}

/** What {@link UserOperations} `submit` is given. */
export interface SubmitOptions<E = never, R = never> {
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
   * The spend policy's approval of the operation's gas ceiling, before anything is sponsored or signed; the hold it
   * returns is kept in the record and given back if the bundler refuses the operation or it is dropped.
   */
  readonly approveGas?: (gas: bigint) => Effect.Effect<GasHold | undefined, E, R>
  /**
   * Called before the gas is estimated with the gas the calls used when simulated in sequence, a lower bound of the
   * operation's: a failure (a spend ceiling it already exceeds) ends the submission with nothing estimated or signed.
   */
  readonly checkExecutionGas?: (gas: bigint) => Effect.Effect<void, E, R>
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
}

/** Settings of {@link UserOperations.layer}. */
export interface UserOperationsOptions {
  /**
   * The longest a request that deploys a Safe holds the account's deploy lock while waiting for its operation to be
   * included; default 30 s. Past it the lock is freed and the request answers (its operation stands as submitted).
   */
  readonly deployWaitMs?: number
}

/** The Safe of `identity`: owned by its KeyVault key alone, with the identity's salt. */
export const identitySafe = (owner: Address, identity: AccountIdentity): SafeAccount =>
  safeAccount({ owners: [owner], threshold: 1, saltNonce: BigInt(accountSalt(identity)) })

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
     * `CallReverted` (the failing call's index and reason) and nothing is signed; `approveGas` (the spend policy)
     * is called with the operation's gas ceiling before anything is sponsored or signed. The first operation of an
     * undeployed Safe is sent alone: concurrent ones wait (bounded) for its inclusion.
     */
    readonly submit: <E = never, R = never>(
      options: SubmitOptions<E, R>
    ) => Effect.Effect<
      TxRecord,
      | E
      | CallReverted
      | ChainUnavailable
      | GasPriceAboveCap
      | AccountDeploying
      | UnsupportedChain
      | BundlerError
      | PaymasterServiceError
      | StoreUnavailable
      | IdempotencyInFlight,
      R
    >
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

        const accountOf = (identity: AccountIdentity) =>
          vault.owner(identity).pipe(Effect.map((owner) => identitySafe(owner.address, identity)))

        const settingsOf = (network: Network) =>
          network.erc4337 === undefined
            ? Effect.fail(new UnsupportedChain({ chain: network.slug }))
            : Effect.succeed(network.erc4337)

        // One round trip: the Safe's code and the fees, and (concurrently) the calls simulated in sequence.
        const inspect = (network: Network, account: SafeAccount, calls: ReadonlyArray<SafeCall>) =>
          rpc(network, "inspect", () =>
            Promise.all([
              readAccountChainState(network.publicClient, account.address),
              simulateBatch(network.publicClient, account.address, calls)
            ])
          ).pipe(
            Effect.flatMap(([state, simulated]) => {
              if (simulated.insufficientFunds) return lackingBalance(network, account.address, calls)
              const revert = simulated.revert
              if (revert === undefined) return Effect.succeed({ state, executionGas: simulated.gasUsed })
              const reason = revert.halted ? haltedReason : decodeRevertReason(revert.data)
              return Effect.fail(new CallReverted({ index: revert.index, reason }))
            })
          )

        /**
         * The call that sends more ETH than the Safe holds: the first whose value, with the values before it, is above
         * the balance (the batch as a whole when the calls spend the ETH otherwise). Retrying never helps until the
         * wallet is funded, so it is the caller's `call_reverted`, never a node's 503.
         */
        const lackingBalance = (network: Network, address: Address, calls: ReadonlyArray<SafeCall>) =>
          rpc(network, "getBalance", () => network.publicClient.getBalance({ address })).pipe(
            Effect.flatMap((balance) => {
              let needs = 0n
              const index = calls.findIndex((call) => {
                needs += call.value
                return needs > balance
              })
              return Effect.fail(
                index < 0
                  ? new CallReverted({ index: -1, reason: `insufficient balance: holds ${balance} wei` })
                  : new CallReverted({ index, reason: insufficientBalanceReason(needs, balance) })
              )
            })
          )

        const isDeployed = (network: Network, address: Address) =>
          rpc(network, "getCode", () => network.publicClient.getCode({ address })).pipe(
            Effect.map((code) => code !== undefined && code !== "0x")
          )

        // Waits, within the request, until the Safe has code: what the next operations of the account need. False
        // when it has none within `deployWaitMs`.
        const awaitDeployment = (network: Network, address: Address) =>
          Effect.gen(function* () {
            while (!(yield* isDeployed(network, address))) {
              yield* Effect.sleep(network.publicClient.pollingInterval)
            }
            return true
          }).pipe(
            withinDeadline(network, "awaitDeployment", deployWaitMs),
            Effect.catch((error) =>
              Effect.logWarning(
                "walletgate: the deploying operation is not included yet; the deploy lock is freed"
              ).pipe(
                Effect.annotateLogs({ network: network.slug, account: address, cause: error.cause }),
                Effect.as(false)
              )
            )
          )

        const send = <E, R>(
          network: Network,
          identity: AccountIdentity,
          account: SafeAccount,
          state: AccountChainState,
          intent: OperationIntent,
          approveGas: ((gas: bigint) => Effect.Effect<GasHold | undefined, E, R>) | undefined,
          nonce: OperationNonce | undefined,
          /** The record's id and the operation's nonce when the caller chose them (see {@link RecordSlot}). */
          recordAs?: RecordSlot
        ) =>
          Effect.gen(function* () {
            const settings = yield* settingsOf(network)
            const fees = capFees(state.fees, state.baseFeePerGas, settings.feeCaps)
            if (fees === undefined) return yield* new GasPriceAboveCap({ network: network.slug })
            const owner = yield* vault.owner(identity)
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
              ...(approveGas === undefined
                ? {}
                : {
                    approveGas: (gas: bigint) =>
                      approveGas(gas).pipe(
                        Effect.tap((held) =>
                          Effect.sync(() => {
                            hold = held
                          })
                        ),
                        Effect.asVoid
                      )
                  })
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

        const submit = <E = never, R = never>(submission: SubmitOptions<E, R>) =>
          Effect.gen(function* () {
            const { network, identity, intent } = submission
            yield* settingsOf(network)
            const owner = yield* vault.owner(identity)
            const account = submission.account ?? identitySafe(owner.address, identity)
            if (!account.owners.includes(getAddress(owner.address)) || account.threshold !== 1) {
              // A caller's bug: the identity's key alone must be able to sign for the Safe it names.
              return yield* Effect.die(new Error("the Safe is not one the identity's key signs for alone"))
            }
            const { state, executionGas } = yield* inspect(network, account, intent.calls)
            // Before any estimate: an operation too large to estimate (a bundler may fail on it) is refused here.
            if (submission.checkExecutionGas !== undefined) yield* submission.checkExecutionGas(executionGas)
            const fixedId =
              submission.recordId === undefined
                ? undefined
                : { id: submission.recordId, nonce: submission.nonce ?? { key: randomNonceKey(), sequence: 0n } }
            if (state.deployed)
              return yield* send(
                network,
                identity,
                account,
                state,
                intent,
                submission.approveGas,
                submission.nonce,
                fixedId
              )
            // An undeployed Safe: its deploying operation must go alone (another one carrying the same initCode is
            // refused with AA10). The deploy lock is held only inside this request, at most `deployWaitMs`.
            const lock = yield* locks.acquire(`deploy:${network.chainId}:${account.address}`, deployWaitMs + 10_000)
            return yield* Effect.gen(function* () {
              const deployed = yield* isDeployed(network, account.address)
              if (deployed) {
                yield* lock.release
                return yield* send(
                  network,
                  identity,
                  account,
                  { ...state, deployed },
                  intent,
                  submission.approveGas,
                  submission.nonce,
                  fixedId
                )
              }
              const recordAs: RecordSlot = fixedId ?? {
                id: yield* newRecordId,
                nonce: submission.nonce ?? { key: randomNonceKey(), sequence: 0n }
              }
              const record = yield* send(
                network,
                identity,
                account,
                state,
                intent,
                submission.approveGas,
                submission.nonce,
                recordAs
              ).pipe(
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
                    if (!(yield* awaitDeployment(network, account.address))) {
                      return yield* new AccountDeploying({ network: network.slug })
                    }
                    yield* Effect.logInfo("walletgate: the Safe was deployed meanwhile; signed again without it").pipe(
                      Effect.annotateLogs({ network: network.slug, account: account.address })
                    )
                    return yield* send(
                      network,
                      identity,
                      account,
                      { ...state, deployed: true },
                      intent,
                      submission.approveGas,
                      submission.nonce,
                      recordAs
                    )
                  })
                )
              )
              yield* awaitDeployment(network, account.address)
              return record
            }).pipe(Effect.ensuring(lock.release))
          })

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
              record.sentAfterBlock === undefined
                ? maxBigint(0n, head - logSearchBlocks)
                : BigInt(record.sentAfterBlock)
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
                network.publicClient
                  .getTransactionReceipt({ hash: receipt.receipt.transactionHash })
                  .catch(() => undefined)
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
            const pending = yield* bundler
              .isPending(network.chainId, hash)
              .pipe(Effect.catch(() => Effect.succeed(false)))
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

/** Who sponsors the network's operations: its VerifyingPaymaster signer, its ERC-7677 service, or nobody. */
const sponsorOf = (network: Network, sponsor: Erc4337Settings["sponsor"]): OperationSponsor | undefined => {
  if (sponsor === undefined) return undefined
  if (sponsor.kind === "service") {
    return { service: paymasterServiceClient(network, canonicalSafe4337Contracts().entryPoint, sponsor.service) }
  }
  return { paymaster: sponsor.paymaster, signer: sponsor.signer, window: { validUntil: 0, validAfter: 0 } }
}

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
