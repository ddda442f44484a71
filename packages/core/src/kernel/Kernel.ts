import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { getAddress, type Hex } from "viem"
import { AppAuth } from "../auth/AppAuth"
import type { App } from "../auth/apps"
import type { Forbidden, IdentityProviderUnavailable, InvalidAuth } from "../auth/errors"
import { BatchRelay } from "../chain/BatchRelay"
import {
  type CallReverted,
  type ChainUnavailable,
  type GasBudgetExhausted,
  type GasCeilingExceeded,
  UnsupportedChain
} from "../chain/errors"
import { accountSalt } from "../chain/identity"
import { KeyVault } from "../chain/KeyVault"
import { Networks } from "../chain/networks"
import { InvalidRequest } from "../http/errors"
import type { StoreUnavailable } from "../state/errors"
import type { IdempotencyInFlight } from "../state/IdempotencyStore"
import { TransactionLog, type TxRecord } from "../state/TransactionLog"
import { TxNotFound } from "./errors"
import type { KernelTxRequest, KernelTxResponse } from "./schemas"

/** Settings of {@link Kernel.layer}. */
export interface KernelOptions {
  /** Most calls in one batch; default 16. */
  readonly maxCalls?: number
}

/** The answer shape of a kernel transaction record. */
export const kernelTxView = (record: TxRecord): KernelTxResponse => ({
  id: record.id,
  userId: String(record.details.userId),
  chain: record.network,
  account: record.account,
  // BatchRelay's records carry their transaction's hash from the start.
  txHash: record.txHash ?? "",
  status: record.status,
  ...(record.blockNumber === undefined ? {} : { blockNumber: record.blockNumber }),
  ...(record.gasUsed === undefined ? {} : { gasUsed: record.gasUsed })
})

/**
 * Users' wallets (SPEC §4.3): an app sends a batch of calls from the wallet of `userId`, after proving
 * the user with `auth`; the batch runs atomically from the user's own batch account.
 */
export class Kernel extends Context.Service<
  Kernel,
  {
    /** Authorises and submits one batch for the app. */
    readonly send: (
      app: App,
      request: KernelTxRequest
    ) => Effect.Effect<
      KernelTxResponse,
      | UnsupportedChain
      | InvalidRequest
      | InvalidAuth
      | Forbidden
      | IdentityProviderUnavailable
      | CallReverted
      | GasCeilingExceeded
      | GasBudgetExhausted
      | ChainUnavailable
      | StoreUnavailable
      | IdempotencyInFlight
    >
    /** A transaction the app submitted, with its current status. */
    readonly find: (
      app: App,
      id: string
    ) => Effect.Effect<KernelTxResponse, TxNotFound | ChainUnavailable | StoreUnavailable>
  }
>()("@walletgate/core/Kernel") {
  /** The service over `Networks`, `KeyVault`, `BatchRelay`, `TransactionLog`, `AppAuth` and `IdentityProviders`. */
  static readonly layer = (options: KernelOptions = {}) =>
    Layer.effect(
      Kernel,
      Effect.gen(function* () {
        const networks = yield* Networks
        const vault = yield* KeyVault
        const relay = yield* BatchRelay
        const log = yield* TransactionLog
        const appAuth = yield* AppAuth
        const maxCalls = options.maxCalls ?? 16

        const send = Effect.fn("Kernel.send")(function* (app: App, request: KernelTxRequest) {
          const { to, value, data } = request
          const problems = [
            ...(to.length === 0 ? [{ path: "/to", message: "Expected at least 1 call" }] : []),
            ...(to.length > maxCalls ? [{ path: "/to", message: `Expected at most ${maxCalls} calls` }] : []),
            ...(value.length === to.length
              ? []
              : [{ path: "/value", message: `Expected ${to.length} items, as in to` }]),
            ...(data.length === to.length ? [] : [{ path: "/data", message: `Expected ${to.length} items, as in to` }])
          ]
          if (problems.length > 0) return yield* new InvalidRequest({ errors: problems })
          const network = networks.resolve(request.chain)
          if (network === undefined) return yield* new UnsupportedChain({ chain: request.chain })
          const identity = yield* appAuth.authorise(app, request.userId, request.auth ?? "", network)

          const calls = to.map((address, index) => ({
            to: getAddress(address),
            value: BigInt(value[index] ?? "0"),
            data: normaliseHex(data[index] ?? "")
          }))
          const owner = yield* vault.owner(identity)
          const record = yield* relay.submit({
            network,
            owner,
            salt: accountSalt(identity),
            payer: { kind: "batch", app: app.clientId, user: request.userId },
            prepare: () =>
              Effect.succeed({
                calls,
                kind: "kernel" as const,
                owner: app.clientId,
                details: { userId: request.userId }
              })
          })
          yield* Effect.logInfo("walletgate: kernel batch submitted").pipe(
            Effect.annotateLogs({
              network: network.slug,
              account: record.account,
              txHash: record.txHash,
              calls: calls.length
            })
          )
          return kernelTxView(record)
        })

        const find = Effect.fn("Kernel.find")(function* (app: App, id: string) {
          const record = yield* log.find(id)
          if (record === undefined || record.kind !== "kernel" || record.owner !== app.clientId) {
            return yield* new TxNotFound()
          }
          const network = networks.resolve(record.network)
          if (network === undefined) return kernelTxView(record)
          return kernelTxView(yield* relay.refresh(record, network))
        })

        return Kernel.of({ send, find })
      })
    )
}

const normaliseHex = (hex: string): Hex =>
  hex.startsWith("0x") ? (hex.toLowerCase() as Hex) : (`0x${hex.toLowerCase()}` as Hex)
