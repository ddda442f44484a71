import * as Schema from "effect/Schema"
import type { ProblemSlice } from "../internal/problem"

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

/**
 * A `userId` (or a token's subject) that its provider's canonical form cannot take: no wallet is named for it, since
 * no token could ever prove it. Answered 400 `non_canonical_user_id`, with the canonical spelling when one is clear.
 */
export class NonCanonicalUserId extends Schema.TaggedError<NonCanonicalUserId>()("NonCanonicalUserId", {
  provider: Schema.String,
  reason: Schema.String,
  /** The canonical `userId` this one was meant to be, when that is clear (`tel:+15005550006`). */
  canonical: Schema.optionalKey(Schema.String)
}) {}

/** An app would be granted a provider name the deployment has not registered (`registerApp`). */
export class UnknownIdentityProvider extends Schema.TaggedError<UnknownIdentityProvider>()("UnknownIdentityProvider", {
  providers: Schema.Array(Schema.String)
}) {}

/** The errors of app and user authentication answered as problems (`OAuthError` has its own shape). */
export type AuthError = TokenRejected | InvalidAuth | Forbidden | IdentityProviderUnavailable | NonCanonicalUserId

/** How authentication's errors are answered. */
export const authProblems: ProblemSlice<AuthError> = {
  TokenRejected: {
    status: 401,
    code: "invalid_token",
    title: "Invalid token",
    detail: () => "The token is invalid or expired.",
    headers: () => ({ "www-authenticate": 'Bearer error="invalid_token"' })
  },
  InvalidAuth: {
    status: 401,
    code: "invalid_auth",
    title: "Invalid user authentication",
    detail: (e) => `The auth token does not prove the user: ${e.reason}.`
  },
  Forbidden: { status: 403, code: "forbidden", title: "Forbidden", detail: (e) => `Not allowed: ${e.reason}.` },
  IdentityProviderUnavailable: {
    status: 503,
    code: "identity_provider_unavailable",
    title: "Identity provider unavailable",
    detail: (e) => `The key set of the identity provider "${e.provider}" could not be fetched. Try again shortly.`,
    headers: () => ({ "retry-after": "5" })
  },
  NonCanonicalUserId: {
    status: 400,
    code: "non_canonical_user_id",
    title: "Non-canonical user id",
    detail: (e) =>
      `The ${e.provider}: user id is not in its provider's canonical form: ${e.reason}.` +
      (e.canonical === undefined ? "" : ` Send it as "${e.canonical}".`)
  }
}

/**
 * `TokenRejected` as a Patch-style client must see it: such a client fetches a new access token on a 403 and
 * on nothing else, so an expired or invalid token is answered 403 (see {@link withClientStatuses}).
 */
export class AccessTokenRefused extends Schema.TaggedError<AccessTokenRefused>()("AccessTokenRefused", {
  reason: Schema.String
}) {}

/**
 * `Forbidden` as a Patch-style client must see it: such a client retries every 403 with a new token, without
 * limit, so a refusal that no new token changes is answered 422.
 */
export class PermanentlyRefused extends Schema.TaggedError<PermanentlyRefused>()("PermanentlyRefused", {
  reason: Schema.String
}) {}

/** The errors of the Patch-compatible statuses. */
export type ClientStatusError = AccessTokenRefused | PermanentlyRefused

/** How the Patch-compatible statuses are answered: the codes of `TokenRejected` and `Forbidden`, other statuses. */
export const clientStatusProblems: ProblemSlice<ClientStatusError> = {
  AccessTokenRefused: {
    status: 403,
    code: "invalid_token",
    title: "Invalid token",
    detail: () => "The access token is invalid or expired: fetch a new one.",
    headers: () => ({ "www-authenticate": 'Bearer error="invalid_token"' })
  },
  PermanentlyRefused: {
    status: 422,
    code: "forbidden",
    title: "Forbidden",
    detail: (e) => `Not allowed: ${e.reason}. A new access token does not change this.`
  }
}
