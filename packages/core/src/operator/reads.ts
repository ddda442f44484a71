import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { isAddress } from "viem"
import { maskPhone } from "../auth/phone"
import { Networks, rpc } from "../chain/networks"
import type { Bundler } from "../operations/Bundler"
import { pipelineHealth, pipelineHealthy } from "../operations/pipelineHealth"
import { UserOperations } from "../operations/UserOperations"
import type { StoreUnavailable } from "../state/errors"
import { type RecentQuery, TransactionLog, type TxRecord, TxStatus } from "../state/TransactionLog"
import { AccountView } from "./schemas"

/** One user operation as operators see it: its user id masked as the logs mask it, never its signed operation. */
export const OperationView = Schema.Struct({
  id: Schema.String,
  /** The app's client id (a wallet batch) or the API key's id (a payout). */
  app: Schema.String,
  kind: Schema.Literals(["kernel", "payout"]),
  network: Schema.String,
  account: Schema.String,
  /** The user id's last four characters (`***0123`); absent for a payout. */
  user: Schema.optionalKey(Schema.String),
  userOpHash: Schema.optionalKey(Schema.String),
  txHash: Schema.optionalKey(Schema.String),
  status: TxStatus,
  blockNumber: Schema.optionalKey(Schema.Number),
  gasUsed: Schema.optionalKey(Schema.String),
  /** The gas the spend policy reserved for it. */
  gasReserved: Schema.optionalKey(Schema.Number),
  createdAt: Schema.String
})
/** One user operation as operators see it. */
export type OperationView = typeof OperationView.Type

/** One network's ERC-4337 pipeline as operators see it: the bundler's health and the paymaster's deposit. */
export const NetworkView = Schema.Struct({
  network: Schema.String,
  chainId: Schema.Number,
  healthy: Schema.Boolean,
  bundler: Schema.NullOr(Schema.Struct({ reachable: Schema.Boolean, entryPointSupported: Schema.Boolean })),
  paymaster: Schema.NullOr(
    Schema.Struct({
      address: Schema.String,
      depositWei: Schema.NullOr(Schema.String),
      low: Schema.NullOr(Schema.Boolean)
    })
  )
})
/** One network's ERC-4337 pipeline as operators see it. */
export type NetworkView = typeof NetworkView.Type

/** An automation account with its native balance as read now: `null` when its node did not answer or it is past {@link BALANCES_MAX}. */
export const AccountBalanceView = Schema.Struct({ ...AccountView.fields, balanceWei: Schema.NullOr(Schema.String) })
/** An automation account with its native balance as read now. */
export type AccountBalanceView = typeof AccountBalanceView.Type

/** How many pending operations one listing reads the status of at once. */
const STATUS_CONCURRENCY = 4

/** How many balances one listing of accounts reads at once, and at most in all (the rest are `null`). */
const BALANCE_CONCURRENCY = 4
const BALANCES_MAX = 100

/**
 * What operators read beside their changes: the recent user operations of every app, their pending ones' status
 * read now as `GET /v1/kernel/tx/:id` reads it (`UserOperations.status`), and each network's pipeline health.
 */
export class OperatorReads extends Context.Service<
  OperatorReads,
  {
    /** The newest operations first, as `TransactionLog.recent` lists them, pending ones read now. */
    readonly operations: (query: RecentQuery) => Effect.Effect<ReadonlyArray<OperationView>, StoreUnavailable>
    /**
     * `accounts` with their native balance read now, {@link BALANCE_CONCURRENCY} at once, the first
     * {@link BALANCES_MAX} only (never fails: a balance that cannot be read is `null`).
     */
    readonly withBalances: (accounts: ReadonlyArray<AccountView>) => Effect.Effect<ReadonlyArray<AccountBalanceView>>
    /** Every network served, with its bundler's and paymaster's health (never fails: what does not answer is said). */
    readonly networks: Effect.Effect<ReadonlyArray<NetworkView>>
  }
>()("@walletgate/core/OperatorReads") {
  /** Over the `TransactionLog`, the `Networks`, the `Bundler` and the pipeline's status read. */
  static readonly layer: Layer.Layer<OperatorReads, never, TransactionLog | Networks | Bundler | UserOperations> =
    Layer.effect(
      OperatorReads,
      Effect.gen(function* () {
        const log = yield* TransactionLog
        const networks = yield* Networks
        const operations = yield* UserOperations
        const context = yield* Effect.context<Bundler>()

        // A status that cannot be read now (node or store away) leaves the record as it was: a listing never fails
        // for one operation.
        const current = (record: TxRecord): Effect.Effect<TxRecord> => {
          const network = networks.resolve(record.network)
          if (record.status !== "submitted" || network === undefined) return Effect.succeed(record)
          return operations.status(record, network).pipe(
            Effect.map((status) => ({
              ...status.record,
              ...(status.txHash === undefined ? {} : { txHash: status.txHash }),
              ...(status.blockNumber === undefined ? {} : { blockNumber: status.blockNumber }),
              status: status.status
            })),
            Effect.orElseSucceed(() => record)
          )
        }

        const balanceOf = (account: AccountView): Effect.Effect<string | null> => {
          const network = networks.resolve(account.network)
          if (network === undefined || !isAddress(account.address)) return Effect.succeed(null)
          const address = account.address
          return rpc(network, "getBalance", () => network.publicClient.getBalance({ address })).pipe(
            Effect.map((wei) => wei.toString()),
            Effect.orElseSucceed(() => null)
          )
        }

        return OperatorReads.of({
          withBalances: (accounts) =>
            Effect.forEach(
              accounts,
              (account, index) =>
                Effect.map(index < BALANCES_MAX ? balanceOf(account) : Effect.succeed(null), (balanceWei) => ({
                  ...account,
                  balanceWei
                })),
              { concurrency: BALANCE_CONCURRENCY }
            ),
          operations: (query) =>
            log.recent(query).pipe(
              Effect.flatMap((records) => Effect.forEach(records, current, { concurrency: STATUS_CONCURRENCY })),
              Effect.map((records) => records.map(operationView))
            ),
          networks: Effect.forEach(
            networks.all,
            (network) =>
              Effect.map(pipelineHealth(network), (health) => ({
                network: health.network,
                chainId: network.chainId,
                healthy: pipelineHealthy(health),
                bundler: health.bundler,
                paymaster: health.paymaster
              })),
            { concurrency: "unbounded" }
          ).pipe(Effect.provideContext(context))
        })
      })
    )
}

const operationView = (record: TxRecord): OperationView => {
  const userId = record.details.userId
  return {
    id: record.id,
    app: record.owner,
    kind: record.kind,
    network: record.network,
    account: record.account,
    ...(typeof userId === "string" ? { user: maskPhone(userId) } : {}),
    ...(record.userOpHash === undefined ? {} : { userOpHash: record.userOpHash }),
    ...(record.txHash === undefined ? {} : { txHash: record.txHash }),
    status: record.status,
    ...(record.blockNumber === undefined ? {} : { blockNumber: record.blockNumber }),
    ...(record.gasUsed === undefined ? {} : { gasUsed: record.gasUsed }),
    ...(record.gasHold === undefined ? {} : { gasReserved: record.gasHold.gas }),
    createdAt: new Date(record.createdAt).toISOString()
  }
}
