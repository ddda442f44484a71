import * as Schema from "effect/Schema"

/** A JWT failed verification (signature, algorithm, issuer, audience, type, expiry or claims). */
export class TokenRejected extends Schema.TaggedError<TokenRejected>()("TokenRejected", {
  /** Why, for the operator's log; never contains the token. */
  reason: Schema.String
}) {}

/**
 * A client-credentials grant failed (RFC 6749 §5.2). Answered in the RFC's own shape,
 * `{"error", "error_description"}`, not as a problem document.
 */
export class OAuthError extends Schema.TaggedError<OAuthError>()("OAuthError", {
  error: Schema.Literals(["invalid_request", "invalid_client", "unsupported_grant_type", "invalid_scope"]),
  description: Schema.String,
  /** The client authenticated with HTTP Basic, so a 401 must challenge with Basic (RFC 6749 §5.2). */
  basic: Schema.Boolean
}) {}

/** The user's `auth` is missing where required, or does not verify for its provider. Answered 401 `invalid_auth`. */
export class InvalidAuth extends Schema.TaggedError<InvalidAuth>()("InvalidAuth", {
  reason: Schema.String
}) {}

/** Authenticated, but not allowed to do this. Answered 403 `forbidden`. */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  reason: Schema.String
}) {}

/** An external identity provider's key set could not be fetched in time. Answered 503. */
export class IdentityProviderUnavailable extends Schema.TaggedError<IdentityProviderUnavailable>()(
  "IdentityProviderUnavailable",
  { provider: Schema.String }
) {}

/** An app would be granted a provider name the deployment has not registered (`registerApp`). */
export class UnknownIdentityProvider extends Schema.TaggedError<UnknownIdentityProvider>()("UnknownIdentityProvider", {
  providers: Schema.Array(Schema.String)
}) {}
