import * as Schema from "effect/Schema"
import { AddressString, Uint256String } from "../chain/schemas"
import { TxStatus } from "../state/TransactionLog"

/** The most transfers in one payout. */
export const MAX_TRANSFERS = 255

/**
 * Body of `POST /v1/:network/account/:address/payout/disperse`: `{}` pays out by the account's plan; or
 * an explicit payout as existing clients send it, parallel arrays with one entry per transfer (asset an
 * ERC-20 address or the zero address for the native coin, amount in base units).
 */
export const DisperseRequest = Schema.Struct({
  assets: Schema.optionalKey(Schema.Array(AddressString)),
  amounts: Schema.optionalKey(Schema.Array(Uint256String)),
  recipients: Schema.optionalKey(Schema.Array(AddressString))
})
/** Body of a payout request. */
export type DisperseRequest = typeof DisperseRequest.Type

/** The path of the payout endpoints. */
export const PayoutPath = Schema.Struct({
  network: Schema.String.check(
    Schema.isPattern(/^(?:[a-z][a-z0-9-]{0,31}|[1-9][0-9]{0,15})$/, { message: "Expected a network slug or chain id" })
  ),
  address: AddressString
})

/** One transfer of a payout. */
export const Transfer = Schema.Struct({ asset: Schema.String, recipient: Schema.String, amount: Schema.String })
/** One transfer of a payout. */
export type Transfer = typeof Transfer.Type

/** An amount of one asset. */
export const AssetAmount = Schema.Struct({ asset: Schema.String, amount: Schema.String })
/** An amount of one asset. */
export type AssetAmount = typeof AssetAmount.Type

/** Answer of the payout endpoints. */
export const PayoutResponse = Schema.Struct({
  id: Schema.String,
  network: Schema.String,
  account: Schema.String,
  transfers: Schema.Array(Transfer),
  /** What is paid out, per asset. */
  totals: Schema.Array(AssetAmount),
  /** What stays in the account from flooring the shares, per asset (empty for explicit payouts). */
  remainder: Schema.Array(AssetAmount),
  /** The ERC-4337 operation's hash: known from the answer on, the same for every retry with the Idempotency-Key. */
  userOpHash: Schema.String,
  status: TxStatus,
  /** The transaction that included the operation, while it stands on the node's canonical chain. */
  txHash: Schema.optionalKey(Schema.String),
  blockNumber: Schema.optionalKey(Schema.Int),
  gasUsed: Schema.optionalKey(Schema.String)
})
/** Answer of the payout endpoints. */
export type PayoutResponse = typeof PayoutResponse.Type
