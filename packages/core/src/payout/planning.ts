import * as Effect from "effect/Effect"
import { type Address, type BaseError, encodePacked, erc20Abi, getAddress, getContractError, keccak256 } from "viem"
import { ChainUnavailable } from "../chain/errors"
import { type Network, rpc } from "../chain/networks"
import type { BundlerError } from "../operations/Bundler"
import type { BundlerBusy, BundlerRefusedSetup, BundlerRejected, CallReverted } from "../operations/errors"
import type { SafeAccount } from "../operations/safeAccount"
import { readNonceSequence } from "../operations/simulation"
import type { OperationNonce } from "../operations/UserOperations"
import { NATIVE_ASSET, type PayoutPlan } from "./accounts"
import {
  AmountPrecision,
  AssetDecimalsUnknown,
  AssetNotAToken,
  InsufficientBalance,
  InvalidPayout,
  NothingToDisperse,
  PlanPayoutTaken
} from "./errors"
import type { DisperseRequest } from "./schemas"
import {
  contractRefused,
  DECIMALS_CALL,
  decimalsCall,
  toBaseUnits,
  totalsOf,
  UINT256_MAX,
  uint8Word
} from "./transfers"

// What a payout pays, read from the chain: the assets' code, decimals and the account's balances (by the plan or by
// the request's transfers), before anything is signed.

/** The decimals of the native coin of every network walletgate serves (ETH, MATIC, …). */
const NATIVE_DECIMALS = 18

// An address without code answers every call with empty data, which would read as a node fault (503): it is the
// caller's mistake, so it is looked for first and refused before anything is sent.
/** Fails `AssetNotAToken` unless the asset has contract code. */
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

/** The balance of `account` in the asset, its code checked first (an ERC-20). */
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

/**
 * The transfers of a plan payout: the available balance less the reserve, by shares (floored), and the remainder.
 * `everyShare` (a payout of several operations, split by recipient): every recipient gets a positive amount, one
 * transfer each in the plan's order, so the minimum is raised to what pays the smallest share one base unit.
 */
export const planTransfers = Effect.fnUntraced(function* (
  network: Network,
  account: Address,
  plan: PayoutPlan,
  everyShare = false
) {
  const asset = getAddress(plan.asset)
  const balance = yield* balanceOf(network, account, asset)
  const reserve = BigInt(plan.reserve)
  const available = balance > reserve ? balance - reserve : 0n
  const smallest = BigInt(Math.min(...plan.recipients.map((recipient) => recipient.shareBps)))
  const everyPaid = (10_000n + smallest - 1n) / smallest
  const minimum = everyShare && everyPaid > BigInt(plan.minimumPayout) ? everyPaid : BigInt(plan.minimumPayout)
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

/** The transfers of an explicit payout, in base units, each asset checked and every total within the balance. */
export const explicitTransfers = Effect.fnUntraced(function* (
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
  const transfers: Array<{ asset: Address; recipient: Address; amount: bigint; decimals: number | undefined }> = []
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
    else transfers.push({ asset, recipient: getAddress(recipients[index] ?? NATIVE_ASSET), amount, decimals: known })
  }
  if (precision.length > 0) return yield* new AmountPrecision({ amounts: precision })
  if (problems.length > 0) return yield* new InvalidPayout({ errors: problems })
  for (const [asset, requested] of totalsOf(transfers)) {
    const available = yield* balanceOfChecked(network, account, asset)
    if (requested > available) {
      return yield* new InsufficientBalance({ asset, requested: String(requested), available: String(available) })
    }
  }
  return { transfers, remainder: [] as Array<{ asset: Address; amount: bigint; decimals: number | undefined }> }
})

/**
 * The EntryPoint nonce key of every plan payout (`{}`) of an account: the top 192 bits of
 * `keccak256("walletgate/plan-payout/v1")` (written out, so that importing this module hashes nothing; a test derives
 * it). Plan payouts of one account read the next sequence on it before the balance, so those sent at the same time
 * share one nonce and the EntryPoint executes at most one of them (docs/decisions.md).
 */
export const PLAN_PAYOUT_NONCE_KEY: bigint = 0xb5a87ec376379299be4754586d2fa89fb553b20bebae8bf1n

/** The next sequence on the account's plan payout nonce key. */
export const planNonce = (network: Network, account: Address, entryPoint: Address) =>
  rpc(network, "getNonce", () =>
    readNonceSequence(network.publicClient, entryPoint, account, PLAN_PAYOUT_NONCE_KEY)
  ).pipe(Effect.map((sequence): OperationNonce => ({ key: PLAN_PAYOUT_NONCE_KEY, sequence })))

/**
 * The id of the payout of the account's plan turn `turn` on the chain (a payout of several operations): derived, so
 * that every request of the same turn finds the one payout, its manifest and its parts; shaped as a UUID.
 */
export const planTurnId = (chainId: number, account: Address, turn: bigint): string => {
  const hex = keccak256(
    encodePacked(
      ["string", "uint256", "address", "uint256"],
      ["walletgate/plan-turn/v1", BigInt(chainId), account, turn]
    )
  ).slice(2, 34)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/**
 * A plan payout that failed because another plan payout of the account took its nonce (included, or waiting in
 * the bundler) is `PlanPayoutTaken`, whatever the failure looked like; anything else fails as itself, as
 * `operationOutcomes` classified it (a bundler that did not answer as the chain's `ChainUnavailable`).
 */
export const planTurnTaken = (
  network: Network,
  safe: SafeAccount,
  nonce: OperationNonce | undefined,
  error: BundlerError | ChainUnavailable
): Effect.Effect<
  never,
  PlanPayoutTaken | CallReverted | BundlerRejected | BundlerRefusedSetup | BundlerBusy | ChainUnavailable
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

/**
 * Whether a bundler's refusal says that another operation of the sender holds the nonce in its mempool (alto:
 * "already known" for the same operation, a replacement refused for another on the same nonce).
 */
const nonceTakenInMempool = (message: string): boolean => /already known|replace|nonce/i.test(message)
