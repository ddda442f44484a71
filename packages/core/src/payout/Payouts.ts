import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  encodeFunctionData,
  erc20Abi,
  formatUnits,
  getAddress,
  getContractError,
  type Hex
} from "viem"
import { Forbidden } from "../auth/errors"
import type { BundlerError } from "../chain/Bundler"
import {
  type AccountDeploying,
  type BundlerRefusedSetup,
  type BundlerRejected,
  type CallReverted,
  ChainUnavailable,
  type GasBudgetExhausted,
  type GasCeilingExceeded,
  type GasPriceAboveCap,
  type UnsupportedChain
} from "../chain/errors"
import { automationIdentity } from "../chain/identity"
import { KeyVault } from "../chain/KeyVault"
import { type Network, Networks, rpc } from "../chain/networks"
import type { PaymasterServiceError } from "../chain/paymasterService"
import { SpendPolicy } from "../chain/SpendPolicy"
import type { SafeAccount, SafeCall } from "../chain/safeAccount"
import { readNonceSequence } from "../chain/safeOperation"
import { type OperationNonce, type OperationStatus, UserOperations } from "../chain/UserOperations"
import { InvalidRequest } from "../http/errors"
import type { StoreUnavailable } from "../state/errors"
import type { IdempotencyInFlight } from "../state/IdempotencyStore"
import { TransactionLog, type TxRecord } from "../state/TransactionLog"
import type { ApiKeyRecord } from "./ApiKeys"
import { AutomationAccounts, automationSafe, NATIVE_ASSET, type PayoutPlan } from "./accounts"
import {
  AccountNotFound,
  AmountPrecision,
  AssetDecimalsUnknown,
  AssetNotAToken,
  InsufficientBalance,
  NoPayoutPlan,
  NothingToDisperse,
  PayoutNotFound,
  PlanPayoutTaken,
  UnknownNetwork
} from "./errors"
import {
  type AssetAmount,
  automateStatuses,
  type DisperseRequest,
  MAX_DECIMALS,
  MAX_TRANSFERS,
  type PayoutResponse,
  type Transfer
} from "./schemas"

/**
 * The EntryPoint nonce key of every plan payout (`{}`) of an account: the top 192 bits of
 * `keccak256("walletgate/plan-payout/v1")` (written out, so that importing this module hashes nothing; a test derives
 * it). Plan payouts of one account read the next sequence on it before the balance, so those sent at the same time
 * share one nonce and the EntryPoint executes at most one of them (docs/decisions.md).
 */
export const PLAN_PAYOUT_NONCE_KEY: bigint = 0xb5a87ec376379299be4754586d2fa89fb553b20bebae8bf1n

/** The payout view of a transaction record, with where it stands when that was read (`status`). */
export const payoutView = (record: TxRecord, status?: OperationStatus): PayoutResponse => {
  const txHash = status?.txHash ?? record.txHash
  const blockNumber = status?.blockNumber ?? record.blockNumber
  const now = status?.status ?? record.status
  return {
    id: record.id,
    network: record.network,
    account: record.account,
    transfers: (record.details.transfers as ReadonlyArray<Transfer>).map(inTokens),
    totals: (record.details.totals as ReadonlyArray<AssetAmount>).map(inTokens),
    remainder: (record.details.remainder as ReadonlyArray<AssetAmount>).map(inTokens),
    userOpHash: record.userOpHash ?? "",
    hash: record.userOpHash ?? "",
    status: now,
    meta: { status: automateStatuses[now] },
    ...(txHash === undefined ? {} : { txHash }),
    ...(blockNumber === undefined ? {} : { blockNumber }),
    ...(record.gasUsed === undefined ? {} : { gasUsed: record.gasUsed })
  }
}

/**
 * An amount of the record (base units, and the asset's decimals where known) with its token amount beside; none for
 * decimals over {@link MAX_DECIMALS} (never recorded since they are refused, but formatting them would take time
 * that grows with them).
 */
const inTokens = <A extends { readonly amount: string; readonly decimals?: number }>(part: A): A =>
  part.decimals === undefined || part.decimals > MAX_DECIMALS
    ? part
    : { ...part, tokenAmount: formatUnits(BigInt(part.amount), part.decimals) }

/** The decimals of the native coin of every network walletgate serves (ETH, MATIC, …). */
export const NATIVE_DECIMALS = 18

type PayoutError =
  | UnknownNetwork
  | Forbidden
  | AccountNotFound
  | InvalidRequest
  | NoPayoutPlan
  | NothingToDisperse
  | InsufficientBalance
  | AssetNotAToken
  | AssetDecimalsUnknown
  | AmountPrecision
  | PlanPayoutTaken
  | CallReverted
  | BundlerRejected
  | BundlerRefusedSetup
  | PaymasterServiceError
  | GasCeilingExceeded
  | GasBudgetExhausted
  | GasPriceAboveCap
  | AccountDeploying
  | UnsupportedChain
  | ChainUnavailable
  | StoreUnavailable
  | IdempotencyInFlight

/**
 * Automation payouts (SPEC §4.4): pay an automation account's funds out to its recipients in one sponsored user
 * operation from the account's Safe (native and ERC-20 transfers batched), within the API key's gas budget.
 */
export class Payouts extends Context.Service<
  Payouts,
  {
    /**
     * Pays out by the plan (`{}`) or as the body lists (amounts in whole tokens, scaled by each asset's decimals on
     * chain, unless `unit` is `base`); the key must cover the network and the account.
     */
    readonly disperse: (
      key: ApiKeyRecord,
      network: string,
      address: string,
      request: DisperseRequest
    ) => Effect.Effect<PayoutResponse, PayoutError>
    /** A payout of the account, with where it stands now (read from the bundler, confirmed on the node). */
    readonly find: (
      key: ApiKeyRecord,
      network: string,
      address: string,
      id: string
    ) => Effect.Effect<
      PayoutResponse,
      UnknownNetwork | Forbidden | PayoutNotFound | ChainUnavailable | StoreUnavailable
    >
    /**
     * A payout on `network` by its operation's hash (the answer's `hash`) or its including transaction's, with where
     * it stands now; found only when the key covers its account and network, and never another key's.
     */
    readonly findByHash: (
      key: ApiKeyRecord,
      network: string,
      hash: string
    ) => Effect.Effect<
      PayoutResponse,
      UnknownNetwork | Forbidden | PayoutNotFound | ChainUnavailable | StoreUnavailable
    >
    /**
     * The answer a retry with the payout's Idempotency-Key gets: the record's payout, its signed operation re-sent as
     * it was (same hash) when the bundler does not know it (a crash between recording and sending); `undefined` when
     * there is no record (nothing was sent).
     */
    readonly recover: (id: string) => Effect.Effect<PayoutResponse | undefined, ChainUnavailable | StoreUnavailable>
  }
>()("@walletgate/core/Payouts") {
  /** The service over `Networks`, `AutomationAccounts`, `KeyVault`, `UserOperations`, `SpendPolicy` and `TransactionLog`. */
  static readonly layer = Layer.effect(
    Payouts,
    Effect.gen(function* () {
      const networks = yield* Networks
      const accounts = yield* AutomationAccounts
      const vault = yield* KeyVault
      const operations = yield* UserOperations
      const spend = yield* SpendPolicy
      const log = yield* TransactionLog

      /** The network, if the key covers it; a test key never acts on a live network. */
      const authoriseNetwork = Effect.fnUntraced(function* (key: ApiKeyRecord, slug: string) {
        const network = networks.resolve(slug)
        if (network === undefined) return yield* new UnknownNetwork({ network: slug })
        if (!key.networks.includes(network.slug))
          return yield* new Forbidden({ reason: "the key does not cover this network" })
        if (key.mode === "test" && !network.testnet) {
          return yield* new Forbidden({ reason: "a test key never moves funds on a live network" })
        }
        return network
      })

      /** The network, if the key covers it and the account. */
      const authorise = Effect.fnUntraced(function* (key: ApiKeyRecord, slug: string, address: string) {
        const network = yield* authoriseNetwork(key, slug)
        if (!key.accounts.includes(address.toLowerCase())) {
          return yield* new Forbidden({ reason: "the key does not cover this account" })
        }
        return network
      })

      // An address without code answers every call with empty data, which would read as a node fault (503): it is the
      // caller's mistake, so it is looked for first and refused before anything is sent.
      const hasCode = (network: Network, asset: Address) =>
        rpc(network, "getCode", () => network.publicClient.getCode({ address: asset })).pipe(
          Effect.flatMap((code) =>
            code === undefined || code === "0x" ? Effect.fail(new AssetNotAToken({ asset })) : Effect.void
          )
        )

      /** The balance of `account`, the asset's code already checked. */
      const balanceOfChecked = (network: Network, account: Address, asset: Address) =>
        asset === NATIVE_ASSET
          ? rpc(network, "getBalance", () => network.publicClient.getBalance({ address: account }))
          : rpc(network, "balanceOf", () =>
              network.publicClient.readContract({
                address: asset,
                abi: erc20Abi,
                functionName: "balanceOf",
                args: [account]
              })
            )

      const balanceOf = (network: Network, account: Address, asset: Address) =>
        asset === NATIVE_ASSET
          ? balanceOfChecked(network, account, asset)
          : hasCode(network, asset).pipe(Effect.andThen(balanceOfChecked(network, account, asset)))

      /**
       * The asset's decimals, its code already checked: 18 for the native coin, else its `decimals()`; undefined
       * when the contract does not answer it (reverts, or answers nothing: an ERC-20 without the optional metadata).
       * An answer that is not one word holding a `uint8` fails `AssetDecimalsUnknown` before anything is scaled or
       * formatted: formatting grows with the decimals (viem's `formatUnits` is quadratic in them), and a contract
       * chooses them.
       */
      const decimalsOfChecked = (
        network: Network,
        asset: Address
      ): Effect.Effect<number | undefined, ChainUnavailable | AssetDecimalsUnknown> =>
        asset === NATIVE_ASSET
          ? Effect.succeed(NATIVE_DECIMALS)
          : rpc(network, "decimals", () =>
              network.publicClient
                .request({ method: "eth_call", params: [{ to: asset, data: DECIMALS_CALL }, "latest"] })
                .catch((error: unknown) => {
                  if (contractRefused(getContractError(error as BaseError, decimalsCall))) return "0x" as const
                  throw error
                })
            ).pipe(
              Effect.flatMap((answer) => {
                if (answer === "0x") return Effect.succeed(undefined)
                const decimals = uint8Word(answer)
                return decimals === undefined
                  ? Effect.fail(new AssetDecimalsUnknown({ asset, answer: "not_uint8" }))
                  : Effect.succeed(decimals)
              })
            )

      const planNonce = (network: Network, account: Address, entryPoint: Address) =>
        rpc(network, "getNonce", () =>
          readNonceSequence(network.publicClient, entryPoint, account, PLAN_PAYOUT_NONCE_KEY)
        ).pipe(Effect.map((sequence): OperationNonce => ({ key: PLAN_PAYOUT_NONCE_KEY, sequence })))

      const planTransfers = Effect.fnUntraced(function* (network: Network, account: Address, plan: PayoutPlan) {
        const asset = getAddress(plan.asset)
        const balance = yield* balanceOf(network, account, asset)
        const reserve = BigInt(plan.reserve)
        const available = balance > reserve ? balance - reserve : 0n
        const minimum = BigInt(plan.minimumPayout)
        const decimals = yield* decimalsOfChecked(network, asset)
        if (available === 0n || available < minimum) {
          return yield* new NothingToDisperse({
            asset,
            available: String(available),
            minimum: String(minimum),
            ...(decimals === undefined ? {} : { decimals })
          })
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
        return {
          transfers: transfers.map((transfer) => ({ ...transfer, decimals })),
          remainder: [{ asset, amount: available - paid, decimals }]
        }
      })

      const explicitTransfers = Effect.fnUntraced(function* (
        network: Network,
        account: Address,
        request: DisperseRequest
      ) {
        const assets = (request.assets ?? []).map((asset) => getAddress(asset))
        const amounts = request.amounts ?? []
        const recipients = request.recipients ?? []
        // Each asset's code and decimals, once per asset, before any amount is read: token amounts need them.
        const decimals = new Map<Address, number | undefined>()
        for (const asset of new Set(assets)) {
          if (asset !== NATIVE_ASSET) yield* hasCode(network, asset)
          decimals.set(asset, yield* decimalsOfChecked(network, asset))
        }
        const unit = request.unit ?? "token"
        const precision: Array<{ path: string; decimals: number }> = []
        const problems: Array<{ path: string; message: string }> = []
        const transfers: Array<{ asset: Address; recipient: Address; amount: bigint; decimals: number | undefined }> =
          []
        for (const [index, asset] of assets.entries()) {
          const known = decimals.get(asset)
          if (unit === "token" && known === undefined) {
            return yield* new AssetDecimalsUnknown({ asset, answer: "none" })
          }
          const scale = unit === "base" ? 0 : (known ?? 0)
          const amount = toBaseUnits(amounts[index] ?? "0", scale)
          const path = `/amounts/${index}`
          if (amount === undefined) precision.push({ path, decimals: scale })
          else if (amount === 0n) problems.push({ path, message: "Expected a positive amount" })
          else if (amount > UINT256_MAX) problems.push({ path, message: "Expected at most 2^256 - 1 base units" })
          else
            transfers.push({ asset, recipient: getAddress(recipients[index] ?? NATIVE_ASSET), amount, decimals: known })
        }
        if (precision.length > 0) return yield* new AmountPrecision({ amounts: precision })
        if (problems.length > 0) return yield* new InvalidRequest({ errors: problems })
        for (const [asset, requested] of totalsOf(transfers)) {
          const available = yield* balanceOfChecked(network, account, asset)
          if (requested > available) {
            return yield* new InsufficientBalance({ asset, requested: String(requested), available: String(available) })
          }
        }
        return { transfers, remainder: [] as Array<{ asset: Address; amount: bigint; decimals: number | undefined }> }
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
        const plan = explicit._tag === "Plan" ? account.plan : undefined
        if (explicit._tag === "Plan" && plan === undefined) return yield* new NoPayoutPlan()
        const identity = automationIdentity(account.accountKey)
        const safe = automationSafe((yield* vault.owner(identity)).address, account)
        if (safe.address !== getAddress(account.address)) {
          // Registered under an address that is not the Safe of its name (and co-owner): nothing here signs for it.
          yield* Effect.logWarning("walletgate: an automation account's address is not the Safe of its name").pipe(
            Effect.annotateLogs({ network: network.slug, account: account.address })
          )
          return yield* new AccountNotFound()
        }
        // A plan payout reads its nonce before the balance: if another plan payout lands in between, this one's nonce
        // is spent and it cannot execute; if not, the balance it reads is the one it pays out.
        const nonce =
          plan === undefined ? undefined : yield* planNonce(network, safe.address, safe.contracts.entryPoint)
        const planned =
          plan === undefined
            ? yield* explicitTransfers(network, safe.address, request)
            : yield* planTransfers(network, safe.address, plan)
        const payer = { kind: "payout", apiKey: key.id } as const
        const record = yield* operations
          .submit({
            network,
            identity,
            account: safe,
            intent: {
              calls: disperseCalls(planned.transfers),
              kind: "payout",
              owner: account.address,
              details: {
                transfers: planned.transfers.map(showTransfer),
                totals: [...totalsOf(planned.transfers)].map(([asset, amount]) =>
                  showAmount({ asset, amount, decimals: planned.transfers.find((t) => t.asset === asset)?.decimals })
                ),
                remainder: planned.remainder.map(showAmount)
              }
            },
            // The spend policy before anything is sponsored or signed: a refused payout costs nothing.
            checkExecutionGas: (gas) => spend.checkCeiling(network, payer, gas),
            approveGas: (gas) => spend.reserve(network, payer, gas),
            ...(nonce === undefined ? {} : { nonce })
          })
          .pipe(
            Effect.catchTags({
              BundlerRejected: (error) => planTurnTaken(network, safe, nonce, error),
              BundlerRefusedSetup: (error) => planTurnTaken(network, safe, nonce, error),
              BundlerUnavailable: (error) => planTurnTaken(network, safe, nonce, error),
              CallReverted: (error) => planTurnTaken(network, safe, nonce, error),
              // The winner of a race of plan payouts can land between this one's balance read and its simulation,
              // which then fails for want of funds (a node error, not a revert): the moved nonce tells it apart.
              ChainUnavailable: (error) => planTurnTaken(network, safe, nonce, error)
            })
          )
        yield* Effect.annotateCurrentSpan("walletgate.payout_id", record.id)
        yield* Effect.logInfo("walletgate: payout submitted").pipe(
          Effect.annotateLogs({ network: network.slug, account: record.account, userOpHash: record.userOpHash })
        )
        return payoutView(record)
      })

      /**
       * A plan payout that failed because another plan payout of the account took its nonce (included, or waiting in
       * the bundler) is `PlanPayoutTaken`, whatever the failure looked like; anything else fails as itself, as
       * `operationOutcomes` classified it (a bundler that did not answer as the chain's `ChainUnavailable`).
       */
      const planTurnTaken = (
        network: Network,
        safe: SafeAccount,
        nonce: OperationNonce | undefined,
        error: BundlerError | ChainUnavailable
      ): Effect.Effect<
        never,
        PlanPayoutTaken | CallReverted | BundlerRejected | BundlerRefusedSetup | ChainUnavailable
      > =>
        Effect.gen(function* () {
          if (nonce !== undefined) {
            const now = yield* planNonce(network, safe.address, safe.contracts.entryPoint).pipe(Effect.option)
            const moved = now._tag === "Some" && now.value.sequence > nonce.sequence
            const waiting = error._tag === "BundlerRejected" && nonceTakenInMempool(error.message)
            if (moved || waiting) return yield* new PlanPayoutTaken()
          }
          if (error._tag !== "BundlerUnavailable") return yield* error
          return yield* new ChainUnavailable({ network: network.slug, cause: `bundler: ${error.cause}` })
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
        const status = yield* operations.status(record, network)
        return payoutView(status.record, status)
      })

      const findByHash = Effect.fn("Payouts.findByHash")(function* (key: ApiKeyRecord, slug: string, hash: string) {
        const network = yield* authoriseNetwork(key, slug)
        // Another key's payout is answered as no payout at all: the hash reveals nothing about whose it is. A bundle's
        // transaction hash is shared by every operation it included: the key's own payout on the network is answered.
        const record = (yield* log.findByHash(hash)).find(
          (candidate) =>
            candidate.kind === "payout" &&
            candidate.network === network.slug &&
            key.accounts.includes(candidate.account.toLowerCase())
        )
        if (record === undefined) return yield* new PayoutNotFound()
        const status = yield* operations.status(record, network)
        return payoutView(status.record, status)
      })

      const recover = Effect.fn("Payouts.recover")(function* (id: string) {
        const record = yield* log.find(id)
        if (record === undefined) return undefined
        const network = networks.resolve(record.network)
        if (network === undefined) return payoutView(record)
        // Reading its status re-sends the signed operation when the bundler does not know it.
        const status = yield* operations.status(record, network)
        return payoutView(status.record, status)
      })

      return Payouts.of({ disperse, find, findByHash, recover })
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
      : [])
  ]
  return problems.length > 0
    ? { _tag: "Invalid", error: new InvalidRequest({ errors: problems }) }
    : { _tag: "Explicit" }
}

/**
 * Whether a bundler's refusal says that another operation of the sender holds the nonce in its mempool (alto:
 * "already known" for the same operation, a replacement refused for another on the same nonce).
 */
const nonceTakenInMempool = (message: string): boolean => /already known|replace|nonce/i.test(message)

const totalsOf = (
  transfers: ReadonlyArray<{ readonly asset: Address; readonly amount: bigint }>
): Map<Address, bigint> => {
  const totals = new Map<Address, bigint>()
  for (const transfer of transfers) totals.set(transfer.asset, (totals.get(transfer.asset) ?? 0n) + transfer.amount)
  return totals
}

const UINT256_MAX = 2n ** 256n - 1n

/**
 * `amount` (a decimal string) in base units of an asset of `decimals`; undefined when it is finer than one base
 * unit (more non-zero fractional digits than `decimals`: trailing zeros change no value and are accepted).
 */
export const toBaseUnits = (amount: string, decimals: number): bigint | undefined => {
  const [whole = "0", fraction = ""] = amount.split(".")
  const significant = fraction.replace(/0+$/, "")
  if (significant.length > decimals) return undefined
  return BigInt(whole) * 10n ** BigInt(decimals) + BigInt(significant.padEnd(decimals, "0") || "0")
}

/** `decimals()`: its selector as call data, and its name and ABI to read a refusal by. */
const DECIMALS_CALL: Hex = "0x313ce567"
const decimalsCall = { abi: erc20Abi, functionName: "decimals", args: [] }

/** The `uint8` in `answer` when it is exactly one ABI word holding 0–255 (an ERC-20's `decimals()`), else undefined. */
const uint8Word = (answer: Hex): number | undefined => {
  if (!/^0x[0-9a-fA-F]{64}$/.test(answer)) return undefined
  const value = BigInt(answer)
  return value <= BigInt(MAX_DECIMALS) ? Number(value) : undefined
}

/** Whether a contract call failed because the contract refused it (reverted, or has no such function). */
const contractRefused = (error: unknown): boolean =>
  error instanceof BaseError &&
  error.walk(
    (cause) => cause instanceof ContractFunctionRevertedError || cause instanceof ContractFunctionZeroDataError
  ) !== null

/** An amount as the record keeps it: base units as a string, and the asset's decimals where known. */
const showAmount = (part: {
  readonly asset: Address
  readonly amount: bigint
  readonly decimals: number | undefined
}): AssetAmount => ({
  asset: part.asset,
  amount: String(part.amount),
  ...(part.decimals === undefined ? {} : { decimals: part.decimals })
})

const showTransfer = (transfer: {
  readonly asset: Address
  readonly recipient: Address
  readonly amount: bigint
  readonly decimals: number | undefined
}): Transfer => {
  const { asset, ...amount } = showAmount(transfer)
  return { asset, recipient: transfer.recipient, ...amount }
}

/**
 * The batch: one call per transfer, native coin sent as the call's value and an ERC-20 by its `transfer`, run
 * atomically by the Safe in one user operation (MultiSendCallOnly).
 */
const disperseCalls = (
  transfers: ReadonlyArray<{ readonly asset: Address; readonly recipient: Address; readonly amount: bigint }>
): Array<SafeCall> =>
  transfers.map((transfer) =>
    transfer.asset === NATIVE_ASSET
      ? { to: transfer.recipient, value: transfer.amount, data: "0x" }
      : {
          to: transfer.asset,
          value: 0n,
          data: encodeFunctionData({
            abi: erc20Abi,
            functionName: "transfer",
            args: [transfer.recipient, transfer.amount]
          })
        }
  )
