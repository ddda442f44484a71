import * as Schema from "effect/Schema"
import type { ProblemSlice } from "../internal/problem"

/** A state port (store, limiter, lock) could not be reached in time; nothing was changed. Answered 503. */
export class StoreUnavailable extends Schema.TaggedError<StoreUnavailable>()("StoreUnavailable", {
  /** What was being attempted, for the operator's log (never a key or a secret). */
  operation: Schema.String
}) {}

/** Too many requests; retry after the given number of seconds. Answered 429 `rate_limited`. */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  retryAfterSeconds: Schema.Int
}) {}

/** `RateLimited` for a wait of `retryAfterMs`, in whole seconds (at least 1, as `Retry-After` needs). */
export const rateLimitedAfter = (retryAfterMs: number): RateLimited =>
  new RateLimited({ retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)) })

/** The errors of the state ports. */
export type StateError = StoreUnavailable | RateLimited

/** How the state ports' errors are answered. */
export const stateProblems: ProblemSlice<StateError> = {
  StoreUnavailable: {
    status: 503,
    code: "store_unavailable",
    title: "Service unavailable",
    detail: () => "State storage is unavailable. Try again shortly.",
    headers: () => ({ "retry-after": "1" })
  },
  RateLimited: {
    status: 429,
    code: "rate_limited",
    title: "Too many requests",
    detail: (e) => `Try again in ${e.retryAfterSeconds} seconds.`,
    headers: (e) => ({ "retry-after": String(e.retryAfterSeconds) })
  }
}
