import * as Schema from "effect/Schema"
import type { ProblemSlice } from "../internal/problem"

/** The request names a chain this gateway does not serve. */
export class UnsupportedChain extends Schema.TaggedError<UnsupportedChain>()("UnsupportedChain", {
  chain: Schema.String
}) {}

/** A node did not answer, or answered garbage; nothing was sent. Answered 503 `upstream_unavailable`. */
export class ChainUnavailable extends Schema.TaggedError<ChainUnavailable>()("ChainUnavailable", {
  network: Schema.String,
  /** What failed, for the operator's log (an RPC method and error name, never a key). */
  cause: Schema.String
}) {}

/** The errors of the network plumbing: a chain not served, a node that did not answer. */
export type ChainError = UnsupportedChain | ChainUnavailable

/** How the network plumbing's errors are answered. */
export const chainProblems: ProblemSlice<ChainError> = {
  UnsupportedChain: {
    status: 400,
    code: "unsupported_chain",
    title: "Unsupported chain",
    detail: (e) => `This gateway does not serve the chain "${e.chain}".`
  },
  ChainUnavailable: {
    status: 503,
    code: "upstream_unavailable",
    title: "Chain node unavailable",
    detail: (e) => `The node of "${e.network}" did not answer properly; nothing was sent. Try again shortly.`,
    headers: () => ({ "retry-after": "5" })
  }
}
