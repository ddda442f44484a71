import * as Schema from "effect/Schema"

/** The request names a chain this gateway does not serve. Answered 400 `unsupported_chain`. */
export class UnsupportedChain extends Schema.TaggedError<UnsupportedChain>()("UnsupportedChain", {
  chain: Schema.String
}) {}

/** Simulation showed the batch would revert; nothing was sent and no gas spent. Answered 422 `call_reverted`. */
export class CallReverted extends Schema.TaggedError<CallReverted>()("CallReverted", {
  /** The index of the failing call in the batch. */
  index: Schema.Int,
  /** The decoded revert reason. */
  reason: Schema.String
}) {}

/** No transaction with this id is visible to the caller. Answered 404 `tx_not_found`. */
export class TxNotFound extends Schema.TaggedError<TxNotFound>()("TxNotFound", {}) {}
