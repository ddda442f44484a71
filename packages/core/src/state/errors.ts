import * as Schema from "effect/Schema"

/** A state port (store, limiter, lock) could not be reached in time; nothing was changed. Answered 503. */
export class StoreUnavailable extends Schema.TaggedError<StoreUnavailable>()("StoreUnavailable", {
  /** What was being attempted, for the operator's log (never a key or a secret). */
  operation: Schema.String
}) {}
