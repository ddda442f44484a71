import * as Schema from "effect/Schema"
import type { ProblemSlice } from "../internal/problem"

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

/** A node did not answer, or answered garbage; nothing was sent. Answered 503 `upstream_unavailable`. */
export class ChainUnavailable extends Schema.TaggedError<ChainUnavailable>()("ChainUnavailable", {
  network: Schema.String,
  /** What failed, for the operator's log (an RPC method and error name, never a key). */
  cause: Schema.String
}) {}

/** The errors of the chain layer. */
export type ChainError = UnsupportedChain | CallReverted | ChainUnavailable

/** How the chain layer's errors are answered. */
export const chainProblems: ProblemSlice<ChainError> = {
  UnsupportedChain: {
    status: 400,
    code: "unsupported_chain",
    title: "Unsupported chain",
    detail: (e) => `This gateway does not serve the chain "${e.chain}".`
  },
  CallReverted: {
    status: 422,
    code: "call_reverted",
    title: "Call would revert",
    detail: (e) =>
      e.index >= 0 ? `Call ${e.index} would revert: ${e.reason}.` : `The batch would revert: ${e.reason}.`,
    extensions: (e) => ({ index: e.index, reason: e.reason })
  },
  ChainUnavailable: {
    status: 503,
    code: "upstream_unavailable",
    title: "Chain node unavailable",
    detail: (e) => `The node of "${e.network}" did not answer properly; nothing was sent. Try again shortly.`,
    headers: () => ({ "retry-after": "5" })
  }
}
