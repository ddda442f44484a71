import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  encodeFunctionData,
  erc20Abi,
  formatUnits,
  type Hex
} from "viem"
import type { SafeCall } from "../operations/safeAccount"
import { NATIVE_ASSET } from "./accounts"
import { InvalidPayout } from "./errors"
import { type AssetAmount, type DisperseRequest, MAX_DECIMALS, MAX_TRANSFERS, type Transfer } from "./schemas"

/**
 * An amount of the record (base units, and the asset's decimals where known) with its token amount beside; none for
 * decimals over {@link MAX_DECIMALS} (never recorded since they are refused, but formatting them would take time
 * that grows with them).
 */
export const inTokens = <A extends { readonly amount: string; readonly decimals?: number }>(part: A): A =>
  part.decimals === undefined || part.decimals > MAX_DECIMALS
    ? part
    : { ...part, tokenAmount: formatUnits(BigInt(part.amount), part.decimals) }

/** Whether the body is a plan payout (`{}`), a well-formed explicit one, or neither. */
export const checkExplicit = (
  request: DisperseRequest
):
  | { readonly _tag: "Plan" }
  | { readonly _tag: "Explicit" }
  | { readonly _tag: "Invalid"; readonly error: InvalidPayout } => {
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
    ? { _tag: "Invalid", error: new InvalidPayout({ errors: problems }) }
    : { _tag: "Explicit" }
}

export const totalsOf = (
  transfers: ReadonlyArray<{ readonly asset: Address; readonly amount: bigint }>
): Map<Address, bigint> => {
  const totals = new Map<Address, bigint>()
  for (const transfer of transfers) totals.set(transfer.asset, (totals.get(transfer.asset) ?? 0n) + transfer.amount)
  return totals
}

export const UINT256_MAX = 2n ** 256n - 1n

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
export const DECIMALS_CALL: Hex = "0x313ce567"
export const decimalsCall = { abi: erc20Abi, functionName: "decimals", args: [] }

/** The `uint8` in `answer` when it is exactly one ABI word holding 0–255 (an ERC-20's `decimals()`), else undefined. */
export const uint8Word = (answer: Hex): number | undefined => {
  if (!/^0x[0-9a-fA-F]{64}$/.test(answer)) return undefined
  const value = BigInt(answer)
  return value <= BigInt(MAX_DECIMALS) ? Number(value) : undefined
}

/** Whether a contract call failed because the contract refused it (reverted, or has no such function). */
export const contractRefused = (error: unknown): boolean =>
  error instanceof BaseError &&
  error.walk(
    (cause) => cause instanceof ContractFunctionRevertedError || cause instanceof ContractFunctionZeroDataError
  ) !== null

/** An amount as the record keeps it: base units as a string, and the asset's decimals where known. */
export const showAmount = (part: {
  readonly asset: Address
  readonly amount: bigint
  readonly decimals: number | undefined
}): AssetAmount => ({
  asset: part.asset,
  amount: String(part.amount),
  ...(part.decimals === undefined ? {} : { decimals: part.decimals })
})

export const showTransfer = (transfer: {
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
export const disperseCalls = (
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

/** What a payout's record shows: its transfers, the totals per asset, and what flooring the shares left. */
export const shownDetails = (planned: {
  readonly transfers: ReadonlyArray<Parameters<typeof showTransfer>[0]>
  readonly remainder: ReadonlyArray<Parameters<typeof showAmount>[0]>
}) => ({
  transfers: planned.transfers.map(showTransfer),
  totals: [...totalsOf(planned.transfers)].map(([asset, amount]) =>
    showAmount({ asset, amount, decimals: planned.transfers.find((t) => t.asset === asset)?.decimals })
  ),
  remainder: planned.remainder.map(showAmount)
})
