import * as Schema from "effect/Schema"

/** The request names a chain this gateway does not serve. */
export class UnsupportedChain extends Schema.TaggedError<UnsupportedChain>()("UnsupportedChain", {
  chain: Schema.String
}) {}

/** Simulation showed the batch would revert; nothing was sent and no gas spent. */
export class CallReverted extends Schema.TaggedError<CallReverted>()("CallReverted", {
  /** The index of the failing call in the batch. */
  index: Schema.Int,
  /** The decoded revert reason. */
  reason: Schema.String
}) {}
