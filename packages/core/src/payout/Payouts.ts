import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type Address, encodeFunctionData, getAddress } from "viem"
import { Forbidden } from "../auth/errors"
import { disperseArtifact, testTokenArtifact } from "../chain/artifacts"
import { BatchRelay } from "../chain/BatchRelay"
import type { BatchCall } from "../chain/contracts"
import type { CallReverted, ChainUnavailable, GasBudgetExhausted, GasCeilingExceeded } from "../chain/errors"
import { accountSalt, automationIdentity } from "../chain/identity"
import { KeyVault } from "../chain/KeyVault"
import { type Network, Networks, rpc } from "../chain/networks"
import { InvalidRequest } from "../http/errors"
import type { StoreUnavailable } from "../state/errors"
import type { IdempotencyInFlight } from "../state/IdempotencyStore"
import { TransactionLog, type TxRecord } from "../state/TransactionLog"
import type { ApiKeyRecord } from "./ApiKeys"
import { AutomationAccounts, NATIVE_ASSET, type PayoutPlan } from "./accounts"
import {
  AccountNotFound,
  AssetNotAToken,
  InsufficientBalance,
  NoPayoutPlan,
  NothingToDisperse,
  PayoutNotFound,
  UnknownNetwork
} from "./errors"
import { type AssetAmount, type DisperseRequest, MAX_TRANSFERS, type PayoutResponse, type Transfer } from "./schemas"

/** The payout view of a transaction record. */
export const payoutView = (record: TxRecord): PayoutResponse => ({
  id: record.id,
  network: record.network,
  account: record.account,
  transfers: record.details.transfers as ReadonlyArray<Transfer>,
  totals: record.details.totals as ReadonlyArray<AssetAmount>,
  remainder: record.details.remainder as ReadonlyArray<AssetAmount>,
  // BatchRelay's records carry their transaction's hash from the start.
  txHash: record.txHash ?? "",
  status: record.status,
  ...(record.blockNumber === undefined ? {} : { blockNumber: record.blockNumber }),
  ...(record.gasUsed === undefined ? {} : { gasUsed: record.gasUsed })
})

type PayoutError =
  | UnknownNetwork
  | Forbidden
  | AccountNotFound
  | InvalidRequest
  | NoPayoutPlan
  | NothingToDisperse
  | InsufficientBalance
  | AssetNotAToken
  | CallReverted
  | GasCeilingExceeded
  | GasBudgetExhausted
  | ChainUnavailable
  | StoreUnavailable
  | IdempotencyInFlight

/**
 * Automation payouts (SPEC §4.4): pay an account's funds out to its recipients, in one transaction
 * through the project's disperse contract, from the account the service operates.
 */
export class Payouts extends Context.Service<
  Payouts,
  {
    /** Pays out by the plan (`{}`) or as the body lists; the key must cover the network and the account. */
    readonly disperse: (
      key: ApiKeyRecord,
      network: string,
      address: string,
      request: DisperseRequest
    ) => Effect.Effect<PayoutResponse, PayoutError>
    /** A payout of the account, with its current status. */
    readonly find: (
      key: ApiKeyRecord,
      network: string,
      address: string,
      id: string
    ) => Effect.Effect<
      PayoutResponse,
      UnknownNetwork | Forbidden | PayoutNotFound | ChainUnavailable | StoreUnavailable
    >
  }
>()("@walletgate/core/Payouts") {
  /** The service over `Networks`, `AutomationAccounts`, `KeyVault`, `BatchRelay` and `TransactionLog`. */
  static readonly layer = Layer.effect(
    Payouts,
    Effect.gen(function* () {
      const networks = yield* Networks
      const accounts = yield* AutomationAccounts
      const vault = yield* KeyVault
      const relay = yield* BatchRelay
      const log = yield* TransactionLog

      /** The network, if the key covers it and the account; a test key never acts on a live network. */
      const authorise = Effect.fnUntraced(function* (key: ApiKeyRecord, slug: string, address: string) {
        const network = networks.resolve(slug)
        if (network === undefined) return yield* new UnknownNetwork({ network: slug })
        if (!key.networks.includes(network.slug))
          return yield* new Forbidden({ reason: "the key does not cover this network" })
        if (!key.accounts.includes(address.toLowerCase())) {
          return yield* new Forbidden({ reason: "the key does not cover this account" })
        }
        if (key.mode === "test" && !network.testnet) {
          return yield* new Forbidden({ reason: "a test key never moves funds on a live network" })
        }
        return network
      })

      const balanceOf = (network: Network, account: Address, asset: Address) =>
        asset === NATIVE_ASSET
          ? rpc(network, "getBalance", () => network.publicClient.getBalance({ address: account }))
          : // An address without code answers every call with empty data, which would read as a node fault (503):
            // it is the caller's mistake, so it is looked for first and refused before anything is sent.
            rpc(network, "getCode", () => network.publicClient.getCode({ address: asset })).pipe(
              Effect.flatMap(
                (code): Effect.Effect<bigint, ChainUnavailable | AssetNotAToken> =>
                  code === undefined || code === "0x"
                    ? Effect.fail(new AssetNotAToken({ asset }))
                    : rpc(network, "balanceOf", () =>
                        network.publicClient.readContract({
                          address: asset,
                          abi: testTokenArtifact.abi,
                          functionName: "balanceOf",
                          args: [account]
                        })
                      )
              )
            )

      const planTransfers = Effect.fnUntraced(function* (network: Network, account: Address, plan: PayoutPlan) {
        const asset = getAddress(plan.asset)
        const balance = yield* balanceOf(network, account, asset)
        const reserve = BigInt(plan.reserve)
        const available = balance > reserve ? balance - reserve : 0n
        const minimum = BigInt(plan.minimumPayout)
        if (available === 0n || available < minimum) {
          return yield* new NothingToDisperse({ available: String(available), minimum: String(minimum) })
        }
        // Shares are floored; what flooring leaves stays in the account and is reported.
        const transfers = plan.recipients
          .map((recipient) => ({
            asset,
            recipient: getAddress(recipient.address),
            amount: (available * BigInt(recipient.shareBps)) / 10_000n
          }))
          .filter((transfer) => transfer.amount > 0n)
        const paid = transfers.reduce((sum, transfer) => sum + transfer.amount, 0n)
        return { transfers, remainder: [{ asset, amount: available - paid }] }
      })

      const explicitTransfers = Effect.fnUntraced(function* (
        network: Network,
        account: Address,
        request: DisperseRequest
      ) {
        const assets = request.assets ?? []
        const amounts = request.amounts ?? []
        const recipients = request.recipients ?? []
        const transfers = assets.map((asset, index) => ({
          asset: getAddress(asset),
          recipient: getAddress(recipients[index] ?? NATIVE_ASSET),
          amount: BigInt(amounts[index] ?? "0")
        }))
        for (const [asset, requested] of totalsOf(transfers)) {
          const available = yield* balanceOf(network, account, asset)
          if (requested > available) {
            return yield* new InsufficientBalance({ asset, requested: String(requested), available: String(available) })
          }
        }
        return { transfers, remainder: [] as Array<{ asset: Address; amount: bigint }> }
      })

      const disperse = Effect.fn("Payouts.disperse")(function* (
        key: ApiKeyRecord,
        slug: string,
        address: string,
        request: DisperseRequest
      ) {
        const network = yield* authorise(key, slug, address)
        const account = yield* accounts.find(network.slug, address)
        if (account === undefined) return yield* new AccountNotFound()
        const explicit = checkExplicit(request)
        if (explicit._tag === "Invalid") return yield* explicit.error
        if (explicit._tag === "Plan" && account.plan === undefined) return yield* new NoPayoutPlan()
        const identity = automationIdentity(account.accountKey)
        const owner = yield* vault.owner(identity)
        const record = yield* relay.submit({
          network,
          owner,
          salt: accountSalt(identity),
          payer: { kind: "payout", apiKey: key.id },
          // Under the account's lock: balances read here cannot change before the batch runs.
          prepare: (accountAddress) =>
            Effect.gen(function* () {
              const planned =
                explicit._tag === "Explicit" || account.plan === undefined
                  ? yield* explicitTransfers(network, accountAddress, request)
                  : yield* planTransfers(network, accountAddress, account.plan)
              return {
                calls: disperseCalls(network.contracts.disperse, planned.transfers),
                kind: "payout" as const,
                owner: account.address,
                details: {
                  transfers: planned.transfers.map(showTransfer),
                  totals: [...totalsOf(planned.transfers)].map(([asset, amount]) => ({
                    asset,
                    amount: String(amount)
                  })),
                  remainder: planned.remainder.map((part) => ({ asset: part.asset, amount: String(part.amount) }))
                }
              }
            })
        })
        yield* Effect.logInfo("walletgate: payout submitted").pipe(
          Effect.annotateLogs({ network: network.slug, account: record.account, txHash: record.txHash })
        )
        return payoutView(record)
      })

      const find = Effect.fn("Payouts.find")(function* (key: ApiKeyRecord, slug: string, address: string, id: string) {
        const network = yield* authorise(key, slug, address)
        const record = yield* log.find(id)
        if (
          record === undefined ||
          record.kind !== "payout" ||
          record.network !== network.slug ||
          record.account.toLowerCase() !== address.toLowerCase()
        ) {
          return yield* new PayoutNotFound()
        }
        return payoutView(yield* relay.refresh(record, network))
      })

      return Payouts.of({ disperse, find })
    })
  )
}

/** Whether the body is a plan payout (`{}`), a well-formed explicit one, or neither. */
const checkExplicit = (
  request: DisperseRequest
):
  | { readonly _tag: "Plan" }
  | { readonly _tag: "Explicit" }
  | { readonly _tag: "Invalid"; readonly error: InvalidRequest } => {
  const { assets, amounts, recipients } = request
  if (assets === undefined && amounts === undefined && recipients === undefined) return { _tag: "Plan" }
  const length = assets?.length ?? 0
  const problems = [
    ...(assets === undefined ? [{ path: "/assets", message: "Required with amounts and recipients" }] : []),
    ...(amounts === undefined ? [{ path: "/amounts", message: "Required with assets and recipients" }] : []),
    ...(recipients === undefined ? [{ path: "/recipients", message: "Required with assets and amounts" }] : []),
    ...(assets !== undefined && length === 0 ? [{ path: "/assets", message: "Expected at least 1 transfer" }] : []),
    ...(length > MAX_TRANSFERS ? [{ path: "/assets", message: `Expected at most ${MAX_TRANSFERS} transfers` }] : []),
    ...(amounts !== undefined && assets !== undefined && amounts.length !== length
      ? [{ path: "/amounts", message: `Expected ${length} items, as in assets` }]
      : []),
    ...(recipients !== undefined && assets !== undefined && recipients.length !== length
      ? [{ path: "/recipients", message: `Expected ${length} items, as in assets` }]
      : []),
    ...(amounts ?? []).flatMap((amount, index) =>
      amount === "0" ? [{ path: `/amounts/${index}`, message: "Expected a positive amount" }] : []
    )
  ]
  return problems.length > 0
    ? { _tag: "Invalid", error: new InvalidRequest({ errors: problems }) }
    : { _tag: "Explicit" }
}

const totalsOf = (
  transfers: ReadonlyArray<{ readonly asset: Address; readonly amount: bigint }>
): Map<Address, bigint> => {
  const totals = new Map<Address, bigint>()
  for (const transfer of transfers) totals.set(transfer.asset, (totals.get(transfer.asset) ?? 0n) + transfer.amount)
  return totals
}

const showTransfer = (transfer: {
  readonly asset: Address
  readonly recipient: Address
  readonly amount: bigint
}): Transfer => ({
  asset: transfer.asset,
  recipient: transfer.recipient,
  amount: String(transfer.amount)
})

/** The batch: one native disperse with the total as value, and per token an approve and a disperse. */
const disperseCalls = (
  disperse: Address,
  transfers: ReadonlyArray<{ readonly asset: Address; readonly recipient: Address; readonly amount: bigint }>
): Array<BatchCall> =>
  [...totalsOf(transfers)].flatMap(([asset, total]): Array<BatchCall> => {
    const mine = transfers.filter((transfer) => transfer.asset === asset)
    const recipients = mine.map((transfer) => transfer.recipient)
    const amounts = mine.map((transfer) => transfer.amount)
    if (asset === NATIVE_ASSET) {
      return [
        {
          to: disperse,
          value: total,
          data: encodeFunctionData({
            abi: disperseArtifact.abi,
            functionName: "disperseEther",
            args: [recipients, amounts]
          })
        }
      ]
    }
    return [
      {
        to: asset,
        value: 0n,
        data: encodeFunctionData({ abi: testTokenArtifact.abi, functionName: "approve", args: [disperse, total] })
      },
      {
        to: disperse,
        value: 0n,
        data: encodeFunctionData({
          abi: disperseArtifact.abi,
          functionName: "disperseToken",
          args: [asset, recipients, amounts]
        })
      }
    ]
  })
