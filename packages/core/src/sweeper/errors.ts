import * as Schema from "effect/Schema"

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
