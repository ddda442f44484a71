import * as Schema from "effect/Schema"

// The answers of the dust-sweeping lookups, field by field as SPEC §2 (a contract with existing
// clients): which decimals travel as strings and which as numbers, snake_case and camelCase as given.
// Where SPEC §2 leaves nullability open, `null` means "not known": a token without a price has no USD
// or ETH value, and a balance older than the index has no known last transfer.

/** An ISO 8601 UTC timestamp, as `Date.prototype.toISOString` writes it. */
const IsoTimestamp = Schema.String.check(
  Schema.isPattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, { message: "Expected an ISO 8601 UTC timestamp" })
)

/** A non-negative decimal amount in whole units (`"12.5"`), sent as a string so that no digit is lost. */
const DecimalString = Schema.String.check(
  Schema.isPattern(/^(?:0|[1-9]\d*)(?:\.\d*[1-9])?$/, { message: "Expected a decimal amount such as 12.5" })
)

/** A portfolio entry's `token.status` (SPEC §3). */
export const TokenStatus = Schema.Literals(["sweepable", "approved", "unsupported"])
/** A portfolio entry's `token.status`. */
export type TokenStatus = typeof TokenStatus.Type

/** One token of an address (SPEC §2.2). */
export const PortfolioEntry = Schema.Struct({
  token: Schema.Struct({
    symbol: Schema.String,
    contract_address: Schema.String,
    /** `unsupported`: not in the network's list, or no price; `approved`: the allowance covers the balance. */
    status: TokenStatus
  }),
  balance: Schema.Struct({
    /** In whole tokens. */
    amount: Schema.Finite,
    asset_type: Schema.String,
    usd_value: Schema.NullOr(Schema.Finite),
    eth_value: Schema.NullOr(Schema.Finite)
  }),
  /** The token's USD price. */
  quote_rate: Schema.NullOr(Schema.Finite),
  /** The last Transfer of this token to or from the address; the native coin's: the time its balance was read. */
  last_transferred_at: Schema.NullOr(IsoTimestamp),
  /** What the holder would receive: the value less the sweeper's fee; 0 for an unsupported token. */
  sweeping_value: Schema.Struct({ usd: Schema.Finite, eth: Schema.Finite })
})
/** One token of an address. */
export type PortfolioEntry = typeof PortfolioEntry.Type

/** One sweep of an address's tokens (SPEC §2.3). */
export const PastOrder = Schema.Struct({
  blockNum: Schema.Int,
  time: IsoTimestamp,
  erc20: Schema.Struct({ symbol: Schema.String, address: Schema.String, amount: DecimalString }),
  /** The sweep's transaction. */
  hash: Schema.String,
  /** What the holder received: the ETH paid less the fee. */
  value: Schema.Struct({ eth: DecimalString, usd: Schema.Finite }),
  /** The ETH price in USD when the sweep was indexed. */
  ethPrice: Schema.Finite
})
/** One sweep of an address's tokens. */
export type PastOrder = typeof PastOrder.Type

/** Answer of `GET /api/:address` (SPEC §2.1). */
export const WalletInfo = Schema.Struct({
  address: Schema.String,
  portfolio: Schema.Array(PortfolioEntry),
  past_orders: Schema.Array(PastOrder)
})
/** Answer of `GET /api/:address`. */
export type WalletInfo = typeof WalletInfo.Type

/** One element of `GET /api/all-orders` (SPEC §2.4): an open order, or a sweep. */
export const Order = Schema.Struct({
  /** Open: what is left to sweep; swept: what was swept. */
  balance: DecimalString,
  symbol: Schema.String,
  maker: Schema.String,
  time: IsoTimestamp,
  /** Open: the approval's transaction; swept: the sweep's. */
  tx: Schema.String
})
/** One element of `GET /api/all-orders`. */
export type Order = typeof Order.Type

/** One element of `GET /api/orders` (SPEC §2.5): a standing approval with balance still to sweep. */
export const OpenOrder = Schema.Struct({
  /** What is left to sweep: the smaller of the balance and the allowance. */
  balance: DecimalString,
  /** `[symbol, contract address]`. */
  token: Schema.Tuple([Schema.String, Schema.String]),
  maker: Schema.String,
  /** When the approval was given. */
  time: IsoTimestamp,
  /** The approval's transaction. */
  tx: Schema.String
})
/** One element of `GET /api/orders`. */
export type OpenOrder = typeof OpenOrder.Type
