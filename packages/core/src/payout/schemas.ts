import * as Schema from "effect/Schema"
import { AddressString } from "../chain/schemas"
import { PartStatus, PayoutStatus } from "./status"

/** The most decimals an asset may have: ERC-20's `decimals()` is a `uint8`. A larger answer is refused. */
export const MAX_DECIMALS = 255

/**
 * The most transfers in one payout: it is split into operations within the network's per-operation gas ceiling
 * (`splitPayout`). About 500 KB of JSON at the most: raise the gateway's `bodyLimit` (100 KiB by default, about 1,000
 * transfers) to take the largest.
 */
export const MAX_TRANSFERS = 5_000

/**
 * An amount as a decimal string: whole tokens with an optional fraction (`"100"`, `"0.25"`) in the default `unit`,
 * or base units (an integer) with `unit: "base"`.
 */
export const AmountString = Schema.String.check(
  Schema.isPattern(/^(?:0|[1-9][0-9]{0,77})(?:\.[0-9]{1,255})?$/, {
    message: 'Expected a decimal string such as "100" or "0.25"'
  })
)

/**
 * How a payout's amounts are written: `token` (the default, as Paymagic's Automate API reads them) in whole tokens
 * scaled by the asset's `decimals()` on chain (18 for the native coin); `base` in the asset's smallest unit.
 */
export const AmountUnit = Schema.Literals(["token", "base"])
/** How a payout's amounts are written. */
export type AmountUnit = typeof AmountUnit.Type

/**
 * Body of `POST /v1/:network/account/:address/payout/disperse`: `{}` pays out by the account's plan; or an explicit
 * payout as Automate clients send it, parallel arrays with one entry per transfer (asset an ERC-20 address or the
 * zero address for the native coin, amount in whole tokens unless `unit` is `base`). No other field is accepted.
 */
export const DisperseRequest = Schema.Struct({
  assets: Schema.optionalKey(Schema.Array(AddressString)),
  amounts: Schema.optionalKey(Schema.Array(AmountString)),
  recipients: Schema.optionalKey(Schema.Array(AddressString)),
  unit: Schema.optionalKey(AmountUnit)
})
/** Body of a payout request. */
export type DisperseRequest = typeof DisperseRequest.Type

/**
 * Body of `POST /v1/:network/account/:address/payout/transfer`: one asset to one recipient (the zero address for the
 * native coin), the amount in whole tokens unless `unit` is `base`. No other field is accepted.
 */
export const TransferRequest = Schema.Struct({
  asset: AddressString,
  amount: AmountString,
  recipient: AddressString,
  unit: Schema.optionalKey(AmountUnit)
})
/** Body of `POST …/payout/transfer`. */
export type TransferRequest = typeof TransferRequest.Type

/** The path of the payout endpoints. */
export const PayoutPath = Schema.Struct({
  network: Schema.String.check(
    Schema.isPattern(/^(?:[a-z][a-z0-9-]{0,31}|[1-9][0-9]{0,15})$/, { message: "Expected a network slug or chain id" })
  ),
  address: AddressString
})

/** The path of `GET /v1/:network/tx/:hash`. */
export const TxPath = Schema.Struct({
  network: PayoutPath.fields.network,
  hash: Schema.String.check(
    Schema.isPattern(/^0x[0-9a-fA-F]{64}$/, { message: "Expected a 32-byte hash: 0x and 64 hex digits" })
  )
})

/**
 * One transfer of a payout: `amount` in base units, and, where the asset's decimals are known, `decimals` and
 * `tokenAmount` (the same amount in whole tokens).
 */
export const Transfer = Schema.Struct({
  asset: Schema.String,
  recipient: Schema.String,
  amount: Schema.String,
  decimals: Schema.optionalKey(Schema.Int),
  tokenAmount: Schema.optionalKey(Schema.String)
})
/** One transfer of a payout. */
export type Transfer = typeof Transfer.Type

/** An amount of one asset, in base units and, where its decimals are known, in whole tokens. */
export const AssetAmount = Schema.Struct({
  asset: Schema.String,
  amount: Schema.String,
  decimals: Schema.optionalKey(Schema.Int),
  tokenAmount: Schema.optionalKey(Schema.String)
})
/** An amount of one asset. */
export type AssetAmount = typeof AssetAmount.Type

/** The status vocabulary of Paymagic's Automate answers (`meta.status`). */
export const AutomateStatus = Schema.Literals(["pending", "in_transit", "paid", "failed", "canceled"])
/** The status vocabulary of Paymagic's Automate answers. */
export type AutomateStatus = typeof AutomateStatus.Type

/**
 * walletgate's status of a payout → Automate's `meta.status`: the one table (docs/paymagic.md). Until final a payout
 * is `pending`, included in a block or not; `paid` only when every operation was confirmed; a payout that paid some
 * recipients and not others (`partial`) is `failed`, its `operations` saying which landed; `in_transit` (a transfer of
 * several steps in flight) and `canceled` (cancelled by the caller) name nothing a payout does, so they are never
 * answered.
 */
export const automateStatuses: { readonly [S in PayoutStatus]: AutomateStatus } = {
  submitted: "pending",
  confirmed: "paid",
  reverted: "failed",
  dropped: "failed",
  failed: "failed",
  partial: "failed"
}

/**
 * One operation of a payout: its transfers `from` (inclusive) up to `to` (exclusive) in the request's order, its
 * hash once signed, where it stands and, when it failed, why.
 */
export const PayoutOperation = Schema.Struct({
  index: Schema.Int,
  from: Schema.Int,
  to: Schema.Int,
  userOpHash: Schema.optionalKey(Schema.String),
  status: PartStatus,
  /** Why it failed before it was sent: the problem's `code` and its detail. */
  reason: Schema.optionalKey(
    Schema.Struct({
      code: Schema.String,
      detail: Schema.String,
      /** The transfer (its index in the request) whose call would revert, when one was named. */
      transfer: Schema.optionalKey(Schema.Int)
    })
  ),
  txHash: Schema.optionalKey(Schema.String)
})
/** One operation of a payout. */
export type PayoutOperation = typeof PayoutOperation.Type

/** Answer of the payout endpoints: walletgate's fields, plus `hash` and `meta` as Automate clients read them. */
export const PayoutResponse = Schema.Struct({
  id: Schema.String,
  network: Schema.String,
  account: Schema.String,
  transfers: Schema.Array(Transfer),
  /** What is paid out, per asset. */
  totals: Schema.Array(AssetAmount),
  /** What stays in the account from flooring the shares, per asset (empty for explicit payouts). */
  remainder: Schema.Array(AssetAmount),
  /**
   * The (first) ERC-4337 operation's hash: known from the answer on, the same for every retry with the
   * Idempotency-Key.
   */
  userOpHash: Schema.String,
  /**
   * The first operation's hash again (`userOpHash`), under Automate's name: `GET /v1/:network/tx/:hash` finds the
   * payout by it (or by any of its operations' hashes).
   */
  hash: Schema.String,
  /** Where the whole payout stands (see `PayoutStatus`). */
  status: PayoutStatus,
  /** The operations the payout was split into, in order: one unless it is larger than one operation may be. */
  operations: Schema.Array(PayoutOperation),
  /** Automate's status of the payout (see `automateStatuses`). */
  meta: Schema.Struct({ status: AutomateStatus }),
  /** The transaction that included the (first) operation, while it stands on the node's canonical chain. */
  txHash: Schema.optionalKey(Schema.String),
  blockNumber: Schema.optionalKey(Schema.Int),
  gasUsed: Schema.optionalKey(Schema.String)
})
/** Answer of the payout endpoints. */
export type PayoutResponse = typeof PayoutResponse.Type
