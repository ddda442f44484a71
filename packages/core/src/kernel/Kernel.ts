import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { getAddress, type Hex } from "viem"
import { AppAuth } from "../auth/AppAuth"
import type { App } from "../auth/apps"
import type { Forbidden, IdentityProviderUnavailable, InvalidAuth, NonCanonicalUserId } from "../auth/errors"
import type { ChainUnavailable, UnsupportedChain } from "../chain/errors"
import { type Network, Networks, rpc } from "../chain/networks"
import type { BundlerError } from "../operations/Bundler"
import type {
  AccountDeploying,
  CallReverted,
  GasBudgetExhausted,
  GasCeilingExceeded,
  GasPriceAboveCap
} from "../operations/errors"
import { userIdOf } from "../operations/identity"
import type { OperationStatus } from "../operations/operationStatus"
import type { PaymasterServiceError } from "../operations/paymasterService"
import type { GasPayer } from "../operations/SpendPolicy"
import { UserOperations } from "../operations/UserOperations"
import type { StoreUnavailable } from "../state/errors"
import type { IdempotencyInFlight } from "../state/IdempotencyStore"
import { TransactionLog, type TxRecord } from "../state/TransactionLog"
import { TxNotFound } from "./errors"
import type { KernelTxRequest, KernelTxResponse } from "./schemas"

/** Settings of the wallet batch route (`kernelTx`). */
export interface KernelOptions {
  /** Most calls in one batch; default {@link DEFAULT_MAX_CALLS}. The route's schema checks it (`kernelTxRequestOf`). */
  readonly maxCalls?: number
}

/** Most calls in one batch unless `maxCalls` says otherwise. */
export const DEFAULT_MAX_CALLS = 16

/** How a transaction is looked up: by the id walletgate gave it, or by a hash (its operation's or its including transaction's). */
export type TxLookup = { readonly id: string } | { readonly hash: string }

/** The longest `wait` a request may ask for, in seconds: the receipt is awaited inside the request, never after. */
export const MAX_WAIT_SECONDS = 10

/** The longest a wait goes without reading the operation's status when the node's head does not move, in ms. */
const FULL_READ_MS = 1_000

/** The answer shape of a kernel transaction record, with what its status read found (the including transaction). */
const kernelTxView = (
  record: TxRecord,
  found: Pick<OperationStatus, "status" | "txHash" | "blockNumber"> = record as Pick<
    OperationStatus,
    "status" | "txHash" | "blockNumber"
  >
): KernelTxResponse => {
  const txHash = found.txHash ?? record.txHash
  const blockNumber = found.blockNumber ?? record.blockNumber
  return {
    id: record.id,
    userId: String(record.details.userId),
    chain: record.network,
    account: record.account,
    ...(record.userOpHash === undefined ? {} : { userOpHash: record.userOpHash }),
    ...(txHash === undefined ? {} : { txHash }),
    status: found.status,
    ...(blockNumber === undefined ? {} : { blockNumber }),
    ...(record.gasUsed === undefined ? {} : { gasUsed: record.gasUsed })
  }
}

/**
 * Users' wallets (SPEC §4.3): an app sends a batch of calls from the wallet of `userId`, after proving the user with
 * `auth`; the batch runs atomically in one ERC-4337 operation from the user's Safe, sponsored by the network's
 * paymaster within the spend policy (or paid by the Safe where the network has no paymaster).
 */
export class Kernel extends Context.Service<
  Kernel,
  {
    /**
     * Authorises and submits one batch for the app on `network` (the request's chain, resolved once by the route) (1 to `maxCalls` parallel calls, as `kernelTxRequestOf` decodes it); answers once the bundler has it, or, with `waitSeconds`
     * (at most {@link MAX_WAIT_SECONDS}), once it is final or that time has passed.
     */
    readonly send: (
      app: App,
      request: KernelTxRequest,
      network: Network,
      waitSeconds?: number
    ) => Effect.Effect<
      KernelTxResponse,
      | UnsupportedChain
      | InvalidAuth
      | Forbidden
      | IdentityProviderUnavailable
      | NonCanonicalUserId
      | CallReverted
      | GasCeilingExceeded
      | GasBudgetExhausted
      | GasPriceAboveCap
      | AccountDeploying
      | ChainUnavailable
      | BundlerError
      | PaymasterServiceError
      | StoreUnavailable
      | IdempotencyInFlight
    >
    /** A transaction the app submitted, with its status read now (a reorged-out or unknown operation is re-sent). */
    readonly find: (
      app: App,
      id: string
    ) => Effect.Effect<KernelTxResponse, TxNotFound | ChainUnavailable | StoreUnavailable>
    /**
     * A transaction the app submitted, by its id, its operation's hash or its including transaction's hash, never
     * another app's; with `waitSeconds` (at most {@link MAX_WAIT_SECONDS}) its status is read until the operation is
     * included (its `txHash` known) or final, or that time has passed.
     */
    readonly lookup: (
      app: App,
      by: TxLookup,
      waitSeconds?: number
    ) => Effect.Effect<KernelTxResponse, TxNotFound | ChainUnavailable | StoreUnavailable>
    /**
     * The answer to a retry of the request that recorded `id` (same Idempotency-Key): the record, its signed
     * operation re-sent as it was if the bundler does not have it; undefined when there is no such record.
     */
    readonly recover: (app: App, id: string) => Effect.Effect<KernelTxResponse | undefined, StoreUnavailable>
  }
>()("@walletgate/core/Kernel") {
  /** The service over `Networks`, `UserOperations`, `TransactionLog`, and `AppAuth`. */
  static readonly layer = () =>
    Layer.effect(
      Kernel,
      Effect.gen(function* () {
        const networks = yield* Networks
        const operations = yield* UserOperations
        const log = yield* TransactionLog
        const appAuth = yield* AppAuth

        const send = Effect.fn("Kernel.send")(function* (
          app: App,
          request: KernelTxRequest,
          network: Network,
          waitSeconds?: number
        ) {
          // The calls are 1 to `maxCalls`, as many values and data as addresses: the request's schema checked it.
          const { to, value, data } = request
          const identity = yield* appAuth.authorise(app, request.userId, request.auth ?? "", network)
          // Recorded and budgeted under its canonical form: two spellings of one user are one user.
          const userId = userIdOf(identity)
          const payer: GasPayer = {
            kind: "batch",
            app: app.clientId,
            user: userId,
            ...(app.gasPerDay === undefined ? {} : { gasPerDay: app.gasPerDay })
          }

          const calls = to.map((address, index) => ({
            to: getAddress(address),
            value: BigInt(value[index] ?? "0"),
            data: normaliseHex(data[index] ?? "")
          }))
          const record = yield* operations.submit({
            network,
            identity,
            intent: { calls, kind: "kernel", owner: app.clientId, details: { userId } },
            spender: payer
          })
          yield* Effect.logInfo("walletgate: kernel batch submitted").pipe(
            Effect.annotateLogs({
              network: network.slug,
              account: record.account,
              userOpHash: record.userOpHash,
              calls: calls.length
            })
          )
          if (waitSeconds === undefined || waitSeconds <= 0) return kernelTxView(record)
          // A status read that fails (the node or the bundler not answering) ends the wait with the record as it
          // stands: it was sent.
          return yield* awaitStatus(record, network, waitSeconds, (status) => status.status !== "submitted").pipe(
            Effect.orElseSucceed(() => kernelTxView(record))
          )
        })

        /**
         * Reads the operation's status until `done` or `waitSeconds` (at most {@link MAX_WAIT_SECONDS}) have passed,
         * inside the request; one read when `waitSeconds` is 0. Between reads it watches the node's head: a status
         * changes with a block, so the next read comes as soon as the head moves (or {@link FULL_READ_MS} after the
         * last, for a bundler that lost the operation on a chain that mines no block meanwhile). The head is read
         * through the network client's cache, so the requests waiting at once share one `eth_blockNumber` per interval.
         */
        const awaitStatus = (
          record: TxRecord,
          network: Network,
          waitSeconds: number,
          done: (status: OperationStatus) => boolean
        ) =>
          Effect.gen(function* () {
            const deadline = (yield* Clock.currentTimeMillis) + Math.min(waitSeconds, MAX_WAIT_SECONDS) * 1000
            const interval = Math.min(Math.max(network.publicClient.pollingInterval, 50), 1_000)
            const head = rpc(network, "head", () =>
              network.publicClient.getBlockNumber({ cacheTime: Math.floor(interval / 2) })
            )
            let current = record
            while (true) {
              const readAt = yield* Clock.currentTimeMillis
              const headBefore = yield* head
              const status = yield* operations.status(current, network)
              current = status.record
              const view = kernelTxView(status.record, status)
              if (done(status)) return view
              while (true) {
                const now = yield* Clock.currentTimeMillis
                if (now + interval > deadline) return view
                yield* Effect.sleep(interval)
                if (now + interval - readAt >= FULL_READ_MS || (yield* head) !== headBefore) break
              }
            }
          })

        const read = (record: TxRecord, waitSeconds = 0, done: (status: OperationStatus) => boolean = () => true) => {
          const network = networks.resolve(record.network)
          if (network === undefined) return Effect.succeed(kernelTxView(record))
          return awaitStatus(record, network, waitSeconds, done)
        }

        const owned = (app: App, record: TxRecord | undefined): record is TxRecord =>
          record !== undefined && record.kind === "kernel" && record.owner === app.clientId

        const find = Effect.fn("Kernel.find")(function* (app: App, id: string) {
          const record = yield* log.find(id)
          if (!owned(app, record)) return yield* new TxNotFound()
          return yield* read(record)
        })

        const lookup = Effect.fn("Kernel.lookup")(function* (app: App, by: TxLookup, waitSeconds = 0) {
          // Another app's transaction is answered as none at all: an id or a hash reveals nothing about whose it is. A
          // bundle's transaction hash is shared by the operations it included, other apps' among them: the app's own
          // (its oldest, if it had several in that bundle) is answered.
          const record =
            "id" in by
              ? yield* log.find(by.id)
              : (yield* log.findByHash(by.hash)).find((candidate) => owned(app, candidate))
          if (!owned(app, record)) return yield* new TxNotFound()
          return yield* read(
            record,
            waitSeconds,
            (status) => status.status !== "submitted" || status.txHash !== undefined
          )
        })

        const recover = Effect.fn("Kernel.recover")(function* (app: App, id: string) {
          const record = yield* log.find(id)
          if (!owned(app, record)) return undefined
          // The same signed operation (same hash) whatever happens: if the status cannot be read now, the record's.
          return yield* read(record).pipe(Effect.orElseSucceed(() => kernelTxView(record)))
        })

        return Kernel.of({ send, find, lookup, recover })
      })
    )
}

const normaliseHex = (hex: string): Hex =>
  hex.startsWith("0x") ? (hex.toLowerCase() as Hex) : (`0x${hex.toLowerCase()}` as Hex)
