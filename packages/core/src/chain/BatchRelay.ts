import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Semaphore from "effect/Semaphore"
import {
  type Abi,
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  decodeErrorResult,
  encodeFunctionData,
  type Hex,
  keccak256,
  type LocalAccount,
  type TransactionReceipt
} from "viem"
import { randomUuid, SecureRandom } from "../random/SecureRandom"
import { AccountLocks } from "../state/AccountLocks"
import type { StoreUnavailable } from "../state/errors"
import { type IdempotencyInFlight, OperationLink } from "../state/IdempotencyStore"
import { TransactionLog, type TxRecord } from "../state/TransactionLog"
import {
  disperseArtifact,
  sweeperArtifact,
  testTokenArtifact,
  walletAccountArtifact,
  walletFactoryArtifact
} from "./artifacts"
import { type BatchCall, signBatch } from "./contracts"
import { CallReverted, ChainUnavailable, type GasBudgetExhausted, type GasCeilingExceeded } from "./errors"
import { type Network, relayerBalance, rpc, withinDeadline } from "./networks"
import { type GasPayer, SpendPolicy } from "./SpendPolicy"

/** What a batch submission records besides the chain facts. */
export interface BatchIntent {
  readonly calls: ReadonlyArray<BatchCall>
  readonly kind: TxRecord["kind"]
  readonly owner: string
  readonly details: TxRecord["details"]
}

/** Settings of {@link BatchRelay.layer}. */
export interface BatchRelayOptions {
  /** How long a signed batch stays valid; default 600 s. */
  readonly deadlineSeconds?: number
  /** How long to wait for a receipt while holding the account's lock; default 120 s. */
  readonly receiptTimeoutMs?: number
}

// Errors any of our contracts or a test token may revert with, to decode reasons by name.
const knownErrors: Abi = [
  ...walletAccountArtifact.abi,
  ...walletFactoryArtifact.abi,
  ...disperseArtifact.abi,
  ...sweeperArtifact.abi,
  ...testTokenArtifact.abi
].filter((item) => item.type === "error")

/** A readable revert reason: `Error(string)`'s message, a panic code, a known custom error, or the raw data. */
export const decodeRevertReason = (data: Hex): string => {
  if (data === "0x") return "reverted without a reason"
  try {
    const decoded = decodeErrorResult({ abi: knownErrors, data })
    if (decoded.errorName === "Error") return String(decoded.args?.[0] ?? "")
    if (decoded.errorName === "Panic") return `panic 0x${BigInt(String(decoded.args?.[0] ?? 0)).toString(16)}`
    const args = (decoded.args ?? []).map((arg) => String(arg)).join(", ")
    return `${decoded.errorName}(${args})`
  } catch {
    return data.length > 202 ? `${data.slice(0, 202)}…` : data
  }
}

/**
 * Runs batches from the project's batch accounts: the owner signs (EIP-712), the relayer
 * simulates, records, broadcasts and pays the gas. One batch per account at a time: the account's lock
 * is held until the transaction is mined, so the next batch is signed with the next nonce; batches of
 * different accounts run in parallel.
 */
export class BatchRelay extends Context.Service<
  BatchRelay,
  {
    /** The counterfactual address of `owner`'s account with `salt` on `network`. */
    readonly accountAddress: (network: Network, owner: Address, salt: Hex) => Effect.Effect<Address, ChainUnavailable>
    /**
     * Under the account's lock: `prepare` decides the calls (it may read balances safely), then the batch is
     * signed, simulated (a revert fails with `CallReverted` and costs nothing), its gas estimated and reserved
     * from `payer`'s budgets (`SpendPolicy`: refused before the relayer signs, so a refusal costs nothing),
     * recorded, linked to the request's Idempotency-Key (`OperationLink`; `IdempotencyInFlight` if the key was
     * taken over) and broadcast.
     */
    readonly submit: <E, R>(options: {
      readonly network: Network
      readonly owner: LocalAccount
      readonly salt: Hex
      readonly payer: GasPayer
      readonly prepare: (account: Address) => Effect.Effect<BatchIntent, E, R>
    }) => Effect.Effect<
      TxRecord,
      | E
      | CallReverted
      | GasCeilingExceeded
      | GasBudgetExhausted
      | ChainUnavailable
      | StoreUnavailable
      | IdempotencyInFlight,
      R
    >
    /** The record of `id`, refreshed from the chain while it is still `submitted`. */
    readonly refresh: (
      record: TxRecord,
      network: Network
    ) => Effect.Effect<TxRecord, ChainUnavailable | StoreUnavailable>
  }
>()("@walletgate/core/BatchRelay") {
  /** The relay over `AccountLocks`, `TransactionLog` and `SpendPolicy`. */
  static readonly layer = (options: BatchRelayOptions = {}) =>
    Layer.effect(
      BatchRelay,
      Effect.gen(function* () {
        const locks = yield* AccountLocks
        const log = yield* TransactionLog
        const random = yield* SecureRandom
        const spend = yield* SpendPolicy
        const scope = yield* Effect.scope
        const deadlineSeconds = options.deadlineSeconds ?? 600
        const receiptTimeoutMs = options.receiptTimeoutMs ?? 120_000
        const addresses = new Map<string, Address>()
        // One relayer nonce sequence per network: signing and broadcasting take turns, the rest runs in parallel.
        const relayerTurns = new Map<number, { readonly semaphore: Semaphore.Semaphore; next: number | undefined }>()
        const relayerTurn = (network: Network) => {
          let turn = relayerTurns.get(network.chainId)
          if (turn === undefined) {
            turn = { semaphore: Semaphore.makeUnsafe(1), next: undefined }
            relayerTurns.set(network.chainId, turn)
          }
          return turn
        }

        const accountAddress = (network: Network, owner: Address, salt: Hex) => {
          const cacheKey = `${network.chainId}:${owner}:${salt}`
          const cached = addresses.get(cacheKey)
          if (cached !== undefined) return Effect.succeed(cached)
          return rpc(network, "accountAddress", () =>
            network.publicClient.readContract({
              address: network.contracts.walletFactory,
              abi: walletFactoryArtifact.abi,
              functionName: "accountAddress",
              args: [owner, salt]
            })
          ).pipe(Effect.tap((address) => Effect.sync(() => addresses.set(cacheKey, address))))
        }

        const settle = (network: Network, record: TxRecord, receipt: TransactionReceipt) =>
          log
            .settle(record.id, {
              status: receipt.status === "success" ? "confirmed" : "reverted",
              blockNumber: Number(receipt.blockNumber),
              gasUsed: receipt.gasUsed.toString()
            })
            .pipe(Effect.andThen(warnIfRelayerLow(network)))

        const warnIfRelayerLow = (network: Network) =>
          relayerBalance(network).pipe(
            Effect.flatMap(({ balance, low }) =>
              low
                ? Effect.logWarning("walletgate: relayer balance is low").pipe(
                    Effect.annotateLogs({
                      network: network.slug,
                      relayer: network.relayer.account.address,
                      balanceWei: String(balance)
                    })
                  )
                : Effect.void
            ),
            Effect.ignore
          )

        const submit = <E, R>(submission: {
          readonly network: Network
          readonly owner: LocalAccount
          readonly salt: Hex
          readonly payer: GasPayer
          readonly prepare: (account: Address) => Effect.Effect<BatchIntent, E, R>
        }) =>
          Effect.gen(function* () {
            const { network, owner, salt } = submission
            const account = yield* accountAddress(network, owner.address, salt)
            const lock = yield* locks.acquire(`${network.chainId}:${account}`, receiptTimeoutMs + 60_000)
            const sent = yield* Effect.gen(function* () {
              const intent = yield* submission.prepare(account)
              const code = yield* rpc(network, "getCode", () => network.publicClient.getCode({ address: account }))
              const deployed = code !== undefined && code !== "0x"
              const nonce = deployed
                ? yield* rpc(network, "nonce", () =>
                    network.publicClient.readContract({
                      address: account,
                      abi: walletAccountArtifact.abi,
                      functionName: "nonce"
                    })
                  )
                : 0n
              const now = yield* Clock.currentTimeMillis
              const deadline = BigInt(Math.floor(now / 1000) + deadlineSeconds)
              const calls = intent.calls.map((call) => ({ to: call.to, value: call.value, data: call.data }))
              const signature = yield* Effect.promise(() =>
                signBatch(owner, { account, chainId: network.chainId, calls, nonce, deadline })
              )
              const to = deployed ? account : network.contracts.walletFactory
              const data = deployed
                ? encodeFunctionData({
                    abi: walletAccountArtifact.abi,
                    functionName: "execute",
                    args: [calls, deadline, signature]
                  })
                : encodeFunctionData({
                    abi: walletFactoryArtifact.abi,
                    functionName: "deployAndExecute",
                    args: [owner.address, salt, calls, deadline, signature]
                  })
              yield* simulateBatch(network, to, data)
              const gas = yield* rpc(network, "estimateGas", () =>
                network.publicClient.estimateGas({ account: network.relayer.account.address, to, data })
              )
              const gasLimit = (gas * 12n) / 10n
              // The most this batch can cost the relayer, reserved before it signs: a refusal costs nothing.
              yield* spend.reserve(network, submission.payer, gasLimit)
              const fees = yield* rpc(network, "estimateFeesPerGas", () => network.publicClient.estimateFeesPerGas())
              const id = yield* Effect.provideService(randomUuid, SecureRandom, random)
              const turn = relayerTurn(network)
              const record = yield* Effect.gen(function* () {
                const pending = yield* rpc(network, "getTransactionCount", () =>
                  network.publicClient.getTransactionCount({
                    address: network.relayer.account.address,
                    blockTag: "pending"
                  })
                )
                const nonce = Math.max(pending, turn.next ?? 0)
                const serialized = yield* Effect.promise(() =>
                  network.relayer.account.signTransaction({
                    type: "eip1559",
                    chainId: network.chainId,
                    to,
                    data,
                    nonce,
                    gas: gasLimit,
                    maxFeePerGas: fees.maxFeePerGas,
                    maxPriorityFeePerGas: fees.maxPriorityFeePerGas
                  })
                )
                const txHash = keccak256(serialized)
                const record: TxRecord = {
                  id,
                  kind: intent.kind,
                  owner: intent.owner,
                  network: network.slug,
                  chainId: network.chainId,
                  account,
                  txHash,
                  status: "submitted",
                  createdAt: now,
                  details: intent.details
                }
                // Recorded before broadcast: a crash after this line leaves a record, never a second send.
                yield* log.save(record)
                // Linked to the request's Idempotency-Key before broadcast: from here a retry answers from the record.
                // If it cannot be linked, nothing is sent.
                yield* (yield* OperationLink)
                  .link({ id: record.id, txHash })
                  .pipe(Effect.tapError(() => log.discard(record.id).pipe(Effect.ignore)))
                const broadcast = yield* rpc(network, "sendRawTransaction", () =>
                  network.publicClient.sendRawTransaction({ serializedTransaction: serialized })
                ).pipe(Effect.result)
                if (Result.isFailure(broadcast)) {
                  // The node's answer is lost, not necessarily the transaction: only a node that says it does not
                  // know the hash proves nothing was sent. Otherwise the record stands as submitted, the receipt
                  // watcher settles it, and a retry cannot send the money twice.
                  const lookup = yield* rpc(network, "getTransactionByHash", () =>
                    network.publicClient.request({ method: "eth_getTransactionByHash", params: [txHash] })
                  ).pipe(Effect.result)
                  if (Result.isSuccess(lookup) && lookup.success === null) {
                    turn.next = undefined
                    yield* log.discard(record.id)
                    return yield* broadcast.failure
                  }
                  yield* Effect.logWarning(
                    "walletgate: broadcast answer lost; the transaction stands as submitted"
                  ).pipe(
                    Effect.annotateLogs({
                      network: network.slug,
                      txHash: record.txHash,
                      cause: broadcast.failure.cause
                    })
                  )
                }
                turn.next = nonce + 1
                return record
              }).pipe(Semaphore.withPermits(turn.semaphore, 1))
              return record
              // Any way this ends early (a failure, a defect, an interruption) frees the account.
            }).pipe(Effect.onError(() => lock.release))

            // The lock stays held until the transaction is mined, so the account's next batch sees the new nonce.
            yield* rpc(
              network,
              "waitForTransactionReceipt",
              () =>
                network.publicClient.waitForTransactionReceipt({ hash: sent.txHash as Hex, timeout: receiptTimeoutMs }),
              receiptTimeoutMs + network.rpcDeadlineMs
            ).pipe(
              Effect.flatMap((receipt) => settle(network, sent, receipt)),
              Effect.catch((error) =>
                Effect.sync(() => {
                  // Whatever happened to it, the relayer's next nonce is re-read from the node.
                  relayerTurn(network).next = undefined
                }).pipe(
                  Effect.andThen(Effect.logWarning("walletgate: no receipt yet; the account's lock is released")),
                  Effect.annotateLogs({ network: network.slug, txHash: sent.txHash, cause: error._tag })
                )
              ),
              Effect.ensuring(lock.release),
              Effect.forkIn(scope)
            )
            return sent
          })

        const refresh = (record: TxRecord, network: Network) =>
          Effect.gen(function* () {
            if (record.status !== "submitted") return record
            const receipt = yield* rpc(network, "getTransactionReceipt", () =>
              network.publicClient.getTransactionReceipt({ hash: record.txHash as Hex })
            ).pipe(Effect.option)
            if (receipt._tag === "None") return record
            yield* settle(network, record, receipt.value)
            return (yield* log.find(record.id)) ?? record
          })

        return BatchRelay.of({ accountAddress, submit, refresh })
      })
    )
}

/** Simulates the batch from the relayer; a revert becomes `CallReverted` with the failing call and its reason. */
const simulateBatch = (network: Network, to: Address, data: Hex) =>
  Effect.tryPromise({
    try: () => network.publicClient.call({ account: network.relayer.account.address, to, data }),
    catch: (error): CallReverted | ChainUnavailable => {
      const revertData = error instanceof BaseError ? findRevertData(error) : undefined
      if (revertData === undefined) {
        return new ChainUnavailable({
          network: network.slug,
          cause: `call: ${error instanceof Error ? error.name : "error"}`
        })
      }
      try {
        const decoded = decodeErrorResult({ abi: walletAccountArtifact.abi, data: revertData })
        if (decoded.errorName === "CallFailed") {
          const [index, reason] = decoded.args as readonly [bigint, Hex]
          return new CallReverted({ index: Number(index), reason: decodeRevertReason(reason) })
        }
        return new CallReverted({ index: -1, reason: decodeRevertReason(revertData) })
      } catch {
        return new CallReverted({ index: -1, reason: decodeRevertReason(revertData) })
      }
    }
  }).pipe(withinDeadline(network, "call"))

const findRevertData = (error: BaseError): Hex | undefined => {
  const reverted = error.walk((cause) => cause instanceof ContractFunctionRevertedError)
  if (reverted instanceof ContractFunctionRevertedError && reverted.raw !== undefined) return reverted.raw
  const withData = error.walk((cause) => typeof (cause as { data?: unknown }).data === "string")
  const data = (withData as { data?: unknown } | null)?.data
  return typeof data === "string" && data.startsWith("0x") ? (data as Hex) : undefined
}
