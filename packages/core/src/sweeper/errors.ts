import * as Schema from "effect/Schema"
import type { ProblemSlice } from "../internal/problem"

/** The path does not hold exactly one Ethereum address. Answered 400 `invalid_address`. */
export class InvalidAddress extends Schema.TaggedError<InvalidAddress>()("InvalidAddress", {}) {}

/** The gateway has no dust-sweeping configuration (`embeddedPorts({ sweeper })`). Answered 404. */
export class SweeperNotConfigured extends Schema.TaggedError<SweeperNotConfigured>()("SweeperNotConfigured", {}) {}

/** The price source did not answer properly; nothing is answered rather than values without prices. Answered 503. */
export class PriceUnavailable extends Schema.TaggedError<PriceUnavailable>()("PriceUnavailable", {
  /** What failed, for the operator's log. */
  cause: Schema.String
}) {}

/**
 * The order index is further behind the chain than one request may read; what was read is kept, so a
 * retry goes on from there. Answered 503 `index_syncing` with `Retry-After`.
 */
export class IndexSyncing extends Schema.TaggedError<IndexSyncing>()("IndexSyncing", {
  /** The last block indexed. */
  indexed: Schema.String,
  /** The block the request needed. */
  head: Schema.String
}) {}

/** The errors of the dust-sweeping lookups. */
export type SweeperError = InvalidAddress | SweeperNotConfigured | PriceUnavailable | IndexSyncing

/** How the dust-sweeping lookups' errors are answered. */
export const sweeperProblems: ProblemSlice<SweeperError> = {
  InvalidAddress: {
    status: 400,
    code: "invalid_address",
    title: "Invalid address",
    detail: () => "Give exactly one Ethereum address: 0x and 40 hex digits (mixed case must carry its EIP-55 checksum)."
  },
  SweeperNotConfigured: {
    status: 404,
    code: "sweeper_not_configured",
    title: "Dust-sweeping lookups not configured",
    detail: () => "This gateway does not serve dust-sweeping lookups."
  },
  PriceUnavailable: {
    status: 503,
    code: "price_unavailable",
    title: "Prices unavailable",
    detail: () => "The price source did not answer properly. Try again shortly.",
    headers: () => ({ "retry-after": "5" })
  },
  IndexSyncing: {
    status: 503,
    code: "index_syncing",
    title: "Order index catching up",
    detail: () => "The order index is catching up with the chain. Try again shortly.",
    headers: () => ({ "retry-after": "2" })
  }
}
