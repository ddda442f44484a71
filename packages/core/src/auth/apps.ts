import * as Schema from "effect/Schema"

/** How one identity provider's `auth` tokens are verified for an app. */
export const ProviderVerification = Schema.Union([
  /** The native phone sign-in: the user JWT that verifyOTP issues; its `sub` is the user id. */
  Schema.Struct({ kind: Schema.Literal("phone") }),
  /** An external issuer: a JWT verified against its JWKS, issuer and audience, with pinned algorithms. */
  Schema.Struct({
    kind: Schema.Literal("jwks"),
    jwksUrl: Schema.String,
    issuer: Schema.String,
    audience: Schema.String,
    /** The algorithms accepted; never taken from the token. */
    algorithms: Schema.Array(Schema.Literals(["RS256", "PS256", "ES256", "ES384", "EdDSA"]))
  })
])
/** How one identity provider's `auth` tokens are verified for an app. */
export type ProviderVerification = typeof ProviderVerification.Type

/** A provider name: the `<provider>` of `userId`, chosen by the app. */
export const ProviderName = Schema.String.check(
  Schema.isPattern(/^[a-z0-9][a-z0-9_-]{0,31}$/, { message: "Expected 1-32 of a-z, 0-9, _ and -" })
)

/** An app (API client) as registered by the operators. */
export const App = Schema.Struct({
  clientId: Schema.String,
  /** SHA-256 (hex) of the client secret; the secret itself is never stored. */
  secretHash: Schema.String,
  /** The identity providers the app may use, by provider name. */
  providers: Schema.Record(ProviderName, ProviderVerification),
  /** A test-mode app may send blank `auth` on test networks. */
  testMode: Schema.Boolean
})
/** An app (API client) as registered by the operators. */
export type App = typeof App.Type
