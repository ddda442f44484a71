import * as Schema from "effect/Schema"

/** A JWT failed verification (signature, algorithm, issuer, audience, type, expiry or claims). */
export class TokenRejected extends Schema.TaggedError<TokenRejected>()("TokenRejected", {
  /** Why, for the operator's log; never contains the token. */
  reason: Schema.String
}) {}
