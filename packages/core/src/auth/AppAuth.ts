import { createHash, timingSafeEqual } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createRemoteJWKSet, type JWTVerifyGetKey, jwtVerify } from "jose"
import { type AccountIdentity, testUserIdentity, userWalletIdentity } from "../operations/identity"
import { SecureRandom } from "../random/SecureRandom"
import type { RateLimited, StoreUnavailable } from "../state/errors"
import { admit, RateLimiter } from "../state/RateLimiter"
import { type App, isGranted, unregisteredGrants } from "./apps"
import { ClientStore } from "./ClientStore"
import { canonicalId, canonicalTestUserId } from "./canonicalIdentity"
import {
  Forbidden,
  IdentityProviderUnavailable,
  InvalidAuth,
  type NonCanonicalUserId,
  OAuthError,
  TokenRejected,
  UnknownIdentityProvider
} from "./errors"
import { type IdentityProvider, IdentityProviders } from "./IdentityProviders"
import { CLOCK_TOLERANCE_SECONDS, joseReason, SigningKeys } from "./SigningKeys"
import { USER_TOKEN_AUDIENCE, USER_TOKEN_TYPE } from "./tokens"

/** The `aud` of access tokens. */
const ACCESS_TOKEN_AUDIENCE = "walletgate:api"
/** The `typ` of access tokens (RFC 9068). */
const ACCESS_TOKEN_TYPE = "at+jwt"

/** Client credentials as presented to `POST /v1/auth`. */
export interface ClientCredentials {
  readonly clientId: string
  readonly clientSecret: string
  /** Presented with HTTP Basic (a failed 401 then challenges with Basic). */
  readonly basic: boolean
}

/** Settings of {@link AppAuth.layer}. */
export interface AppAuthOptions {
  /** Lifetime of access tokens; default 3600 s. */
  readonly accessTokenTtlSeconds?: number
  /** How long to wait for an external JWKS; default 3 s. */
  readonly jwksTimeoutMs?: number
  /**
   * Access tokens granted to one client per minute, at most; default 120 (a client that refreshes every 30 s
   * from 60 processes). A client that loops on refusals is answered 429 within seconds.
   */
  readonly tokensPerMinute?: number
}

/** The reserved kind of test identities: `test:<anything>`, for test-mode apps on test networks only. */
const TEST_IDENTITY_KIND = "test"

/** Where a wallet request runs, as far as proving its user is concerned. */
export interface UserScope {
  /** A test network: a test-mode app may act for its own test users there without proof. */
  readonly testnet: boolean
}

/** SHA-256 (hex) of a client secret, as {@link App} stores it. */
export const hashClientSecret = (secret: string): string => createHash("sha256").update(secret).digest("hex")

/**
 * Apps and their users: the client-credentials grant, Bearer access tokens, and verification of the
 * user's `auth` for one of the identity providers the app is granted (docs/security.md).
 */
export class AppAuth extends Context.Service<
  AppAuth,
  {
    /** Exchanges client credentials for an access token (RFC 6749 §4.4). */
    readonly grant: (
      credentials: ClientCredentials
    ) => Effect.Effect<
      { readonly accessToken: string; readonly expiresIn: number },
      OAuthError | RateLimited | StoreUnavailable
    >
    /** The app behind an `Authorization: Bearer …` header. */
    readonly authenticate: (authorization: string | undefined) => Effect.Effect<App, TokenRejected | StoreUnavailable>
    /**
     * Verifies `auth` with the registered verifier of `provider`, which the app must be granted, and returns
     * the user's id there in the provider's canonical form (the `<user_id>` of `userId`: the issuer's subject
     * claim); a subject with no canonical form is `InvalidAuth`.
     */
    readonly verifyUser: (
      app: App,
      provider: string,
      auth: string
    ) => Effect.Effect<string, InvalidAuth | Forbidden | IdentityProviderUnavailable>
    /**
     * Whose account `userId` (`<provider>:<id>`) names when `auth` proves it (docs/security.md): the wallet of
     * the user the granted provider's verifier proves (`tel:<E.164>` by the phone JWT of that number); a
     * test-mode app's own test user on a test network (`test:<anything>`, or any id with blank `auth`). The id
     * and the token's subject are both put in the provider's canonical form first (`canonicalId`).
     */
    readonly authorise: (
      app: App,
      userId: string,
      auth: string,
      scope: UserScope
    ) => Effect.Effect<AccountIdentity, InvalidAuth | Forbidden | IdentityProviderUnavailable | NonCanonicalUserId>
    /**
     * Whose account `userId` names, without proof (the resolver): a provider registered and, for an app, granted
     * to it, the id in the provider's canonical form; `test:` ids only for a test-mode app. `app` is absent where
     * the operator opened the resolver.
     */
    readonly identityOf: (
      app: App | undefined,
      userId: string
    ) => Effect.Effect<AccountIdentity, Forbidden | NonCanonicalUserId>
  }
>()("@walletgate/core/AppAuth") {
  /** The service over `ClientStore`, `SigningKeys` and `IdentityProviders`. */
  static readonly layer = (options: AppAuthOptions = {}) =>
    Layer.effect(
      AppAuth,
      Effect.gen(function* () {
        const clients = yield* ClientStore
        const keys = yield* SigningKeys
        const registry = yield* IdentityProviders
        const limiter = yield* RateLimiter
        const ttl = options.accessTokenTtlSeconds ?? 3600
        const tokensPerMinute = options.tokensPerMinute ?? 120
        const timeoutDuration = options.jwksTimeoutMs ?? 3000
        const remoteKeySets = new Map<string, JWTVerifyGetKey>()
        const remoteKeySet = (url: string) => {
          let keySet = remoteKeySets.get(url)
          if (keySet === undefined) {
            keySet = createRemoteJWKSet(new URL(url), {
              timeoutDuration,
              cooldownDuration: 30_000,
              cacheMaxAge: 600_000
            })
            remoteKeySets.set(url, keySet)
          }
          return keySet
        }

        const grant = Effect.fnUntraced(function* (credentials: ClientCredentials) {
          const app = yield* clients.find(credentials.clientId)
          const presented = Buffer.from(hashClientSecret(credentials.clientSecret), "hex")
          // Compare even for an unknown client, so timing does not tell which client ids exist.
          const expected = Buffer.from(app?.secretHash ?? "00".repeat(32), "hex")
          const matches = expected.length === presented.length && timingSafeEqual(expected, presented)
          if (app === undefined || !matches) {
            return yield* new OAuthError({
              error: "invalid_client",
              description: "Client authentication failed.",
              basic: credentials.basic
            })
          }
          yield* admit(limiter, [{ key: `token:${app.clientId}`, limit: tokensPerMinute, windowMs: 60_000 }])
          const { token } = yield* keys.sign({
            subject: app.clientId,
            audience: ACCESS_TOKEN_AUDIENCE,
            type: ACCESS_TOKEN_TYPE,
            ttlSeconds: ttl,
            extra: { client_id: app.clientId }
          })
          return { accessToken: token, expiresIn: ttl }
        })

        const authenticate = Effect.fnUntraced(function* (authorization: string | undefined) {
          const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i.exec(authorization?.trim() ?? "")
          if (match?.[1] === undefined) return yield* new TokenRejected({ reason: "no bearer token" })
          const claims = yield* keys.verify(match[1], { audience: ACCESS_TOKEN_AUDIENCE, type: ACCESS_TOKEN_TYPE })
          const app = yield* clients.find(claims.sub ?? "")
          if (app === undefined) return yield* new TokenRejected({ reason: "the client no longer exists" })
          yield* Effect.annotateCurrentSpan("walletgate.app", app.clientId)
          return app
        })

        const verifyWith = Effect.fnUntraced(function* (verification: IdentityProvider, auth: string) {
          if (verification.kind !== "jwks") {
            const claims = yield* keys
              .verify(auth, { audience: USER_TOKEN_AUDIENCE, type: USER_TOKEN_TYPE })
              .pipe(Effect.mapError((error) => new InvalidAuth({ reason: error.reason })))
            // `phone` ids are walletgate's user ids; `tel` ids the E.164 number the token was issued for.
            return verification.kind === "phone" ? claims.sub : claims.phone_number
          }
          const now = yield* Clock.currentTimeMillis
          const { payload } = yield* Effect.tryPromise({
            try: () =>
              jwtVerify(auth, remoteKeySet(verification.jwksUrl), {
                algorithms: [...verification.algorithms],
                issuer: verification.issuer,
                audience: verification.audience,
                requiredClaims: ["iss", "aud", "sub", "exp", "iat"],
                clockTolerance: CLOCK_TOLERANCE_SECONDS,
                currentDate: new Date(now)
              }),
            catch: (error) => {
              const reason = joseReason(error)
              // A key set that cannot be fetched is the provider's outage, not the user's bad token.
              return reason === "ERR_JWKS_TIMEOUT" || !hasJoseCode(error)
                ? new IdentityProviderUnavailable({ provider: verification.name })
                : new InvalidAuth({ reason })
            }
          })
          return Object.hasOwn(payload, verification.subjectClaim) ? payload[verification.subjectClaim] : undefined
        })

        const verifyUser = Effect.fnUntraced(function* (app: App, provider: string, auth: string) {
          const verification = isGranted(app, provider) ? registry.find(provider) : undefined
          if (verification === undefined) return yield* new Forbidden({ reason: notGranted(provider) })
          const subject = yield* verifyWith(verification, auth)
          if (typeof subject !== "string" || subject === "") {
            return yield* new InvalidAuth({ reason: "the token has no subject" })
          }
          // The subject names a wallet only in the form the id does: a subject no id can take proves nobody.
          return yield* canonicalId(verification, subject).pipe(
            Effect.mapError(
              (error) => new InvalidAuth({ reason: `the token's subject is not a ${provider}: id (${error.reason})` })
            )
          )
        })

        const authorise = Effect.fnUntraced(function* (app: App, userId: string, auth: string, scope: UserScope) {
          const { provider, id } = splitUserId(userId)
          const testing = app.testMode && scope.testnet
          if (provider === TEST_IDENTITY_KIND) {
            if (!testing) return yield* new Forbidden({ reason: TEST_ONLY })
            return testUserIdentity(app.clientId, yield* canonicalTestUserId(userId))
          }
          const verification = isGranted(app, provider) ? registry.find(provider) : undefined
          if (verification === undefined) return yield* new Forbidden({ reason: notGranted(provider) })
          if (auth.trim() === "") {
            if (testing) return testUserIdentity(app.clientId, yield* canonicalTestUserId(userId))
            return yield* new InvalidAuth({
              reason: "auth is required (blank only for test-mode apps on test networks)"
            })
          }
          const canonical = yield* canonicalId(verification, id)
          const verified = yield* verifyUser(app, provider, auth)
          if (verified !== canonical) return yield* new Forbidden({ reason: "auth proves another user" })
          return userWalletIdentity(provider, canonical)
        })

        const identityOf = (app: App | undefined, userId: string) =>
          Effect.suspend((): Effect.Effect<AccountIdentity, Forbidden | NonCanonicalUserId> => {
            const { provider, id } = splitUserId(userId)
            if (provider === TEST_IDENTITY_KIND) {
              return app?.testMode === true
                ? Effect.map(canonicalTestUserId(userId), (canonical) => testUserIdentity(app.clientId, canonical))
                : Effect.fail(new Forbidden({ reason: TEST_ONLY }))
            }
            const granted = app === undefined || isGranted(app, provider)
            const verification = granted ? registry.find(provider) : undefined
            return verification === undefined
              ? Effect.fail(new Forbidden({ reason: notGranted(provider) }))
              : Effect.map(canonicalId(verification, id), (canonical) => userWalletIdentity(provider, canonical))
          })

        return AppAuth.of({ grant, authenticate, verifyUser, authorise, identityOf })
      })
    )
}

const TEST_ONLY = "test: identities are for test-mode apps on test networks"
const notGranted = (provider: string) => `this app may not use the identity provider "${provider}"`

/** `<provider>:<id>` split at its first colon (the request schemas have checked its shape). */
const splitUserId = (userId: string): { readonly provider: string; readonly id: string } => {
  const colon = userId.indexOf(":")
  return { provider: userId.slice(0, colon), id: userId.slice(colon + 1) }
}

const hasJoseCode = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"

/** The credentials of a newly registered app: the secret is shown once and never stored. */
export interface AppCredentials {
  readonly clientId: string
  readonly clientSecret: string
}

/**
 * Registers an app granted the named identity providers; returns its credentials (the secret only this
 * once). Fails with `UnknownIdentityProvider` for a name the deployment has not registered.
 */
export const registerApp = Effect.fnUntraced(function* (options: {
  readonly providers: ReadonlyArray<string>
  readonly testMode?: boolean
  /** The operator's label for the app. */
  readonly name?: string
}) {
  const unknown = unregisteredGrants(yield* IdentityProviders, options.providers)
  if (unknown.length > 0) return yield* new UnknownIdentityProvider({ providers: unknown })
  const random = yield* SecureRandom
  const clients = yield* ClientStore
  const clientId = `wgc_${Buffer.from(yield* random.bytes(12)).toString("hex")}`
  const clientSecret = yield* newClientSecret
  yield* clients.save({
    clientId,
    secretHash: hashClientSecret(clientSecret),
    providers: [...new Set(options.providers)],
    testMode: options.testMode ?? false,
    ...(options.name === undefined ? {} : { name: options.name }),
    createdAt: yield* Clock.currentTimeMillis
  })
  return { clientId, clientSecret } satisfies AppCredentials
})

/** A new client secret (256 random bits, `wgs_…`): shown once, stored only as {@link hashClientSecret}. */
export const newClientSecret: Effect.Effect<string, never, SecureRandom> = Effect.map(
  Effect.flatMap(Effect.service(SecureRandom), (random) => random.bytes(32)),
  (bytes) => `wgs_${Buffer.from(bytes).toString("base64url")}`
)
