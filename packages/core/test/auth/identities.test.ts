import { type App, ClientStore, IdentityProviders, RateLimiter, SecureRandom, SigningKeys } from "@walletgate/core"
import { AppAuth, USER_TOKEN_AUDIENCE, USER_TOKEN_TYPE } from "@walletgate/core/auth"
import { Effect, Layer, Logger, Result } from "effect"
import { describe, expect, it } from "vitest"

const liveApp: App = { clientId: "wgc_live", secretHash: "0".repeat(64), providers: ["phone", "tel"], testMode: false }
const testApp: App = { clientId: "wgc_test", secretHash: "0".repeat(64), providers: ["tel"], testMode: true }
const keys = SigningKeys.ephemeral({ issuer: "walletgate" })
const layer = AppAuth.layer().pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      ClientStore.memory([liveApp, testApp]),
      keys,
      IdentityProviders.layer(),
      RateLimiter.memory,
      SecureRandom.crypto
    )
  )
)
const run = <A, E>(effect: Effect.Effect<A, E, AppAuth | SigningKeys>) =>
  Effect.runPromise(Effect.result(effect).pipe(Effect.provide(layer), Effect.provide(Logger.layer([]))))

/** The user JWT verifyOTP issues for `phone` (user id `user`). */
const phoneJwt = (user: string, phone: string) =>
  Effect.gen(function* () {
    const signed = yield* (yield* SigningKeys).sign({
      subject: user,
      audience: USER_TOKEN_AUDIENCE,
      type: USER_TOKEN_TYPE,
      ttlSeconds: 600,
      extra: { phone_number: phone }
    })
    return signed.token
  })

const LIVE = { testnet: false }
const TESTNET = { testnet: true }

describe("user ids of public identifiers", () => {
  it("proves tel:<E.164> with the phone JWT of that number, and phone:<id> with the same JWT", async () => {
    const result = await run(
      Effect.gen(function* () {
        const jwt = yield* phoneJwt("5c0f3b2a-9d4e-4f6a-8b1c-2d3e4f5a6b7c", "+14155552671")
        const auth = yield* AppAuth
        return [
          yield* auth.authorise(liveApp, "tel:+14155552671", jwt, LIVE),
          yield* auth.authorise(liveApp, "phone:5c0f3b2a-9d4e-4f6a-8b1c-2d3e4f5a6b7c", jwt, LIVE)
        ]
      })
    )
    expect(Result.getOrThrow(result)).toEqual([
      { _tag: "UserWallet", provider: "tel", id: "+14155552671" },
      { _tag: "UserWallet", provider: "phone", id: "5c0f3b2a-9d4e-4f6a-8b1c-2d3e4f5a6b7c" }
    ])
  })

  it("refuses tel: of another number, a blank auth on a live network, and a provider the app is not granted", async () => {
    const refusals = await run(
      Effect.gen(function* () {
        const jwt = yield* phoneJwt("5c0f3b2a-9d4e-4f6a-8b1c-2d3e4f5a6b7c", "+14155552671")
        const auth = yield* AppAuth
        const attempt = (app: App, userId: string, token: string, scope = LIVE) =>
          auth.authorise(app, userId, token, scope).pipe(
            Effect.map(() => "allowed"),
            Effect.catch((error) => Effect.succeed(`${error._tag}: ${"reason" in error ? error.reason : ""}`))
          )
        return [
          yield* attempt(liveApp, "tel:+14155552672", jwt),
          yield* attempt(liveApp, "tel:+14155552671", ""),
          yield* attempt(testApp, "phone:5c0f3b2a-9d4e-4f6a-8b1c-2d3e4f5a6b7c", jwt, TESTNET),
          yield* attempt(liveApp, "constructor:x", jwt)
        ]
      })
    )
    expect(Result.getOrThrow(refusals)).toEqual([
      "Forbidden: auth proves another user",
      "InvalidAuth: auth is required (blank only for test-mode apps on test networks)",
      'Forbidden: this app may not use the identity provider "phone"',
      'Forbidden: this app may not use the identity provider "constructor"'
    ])
  })

  it("gives test:<anything> only to a test-mode app on a test network, as a test user of that app alone", async () => {
    const outcomes = await run(
      Effect.gen(function* () {
        const auth = yield* AppAuth
        const tag = (effect: Effect.Effect<{ readonly _tag: string }, { readonly _tag: string }>) =>
          effect.pipe(
            Effect.map((identity) => identity),
            Effect.catch((error) => Effect.succeed(error))
          )
        return [
          yield* tag(auth.authorise(testApp, "test:alice", "", TESTNET)),
          yield* tag(auth.authorise(testApp, "test:alice", "", LIVE)),
          yield* tag(auth.authorise(liveApp, "test:alice", "", TESTNET)),
          yield* tag(auth.identityOf(testApp, "test:alice")),
          yield* tag(auth.identityOf(undefined, "test:alice"))
        ]
      })
    )
    expect(Result.getOrThrow(outcomes)).toMatchObject([
      { _tag: "TestUser", app: "wgc_test", id: "test:alice" },
      { _tag: "Forbidden" },
      { _tag: "Forbidden" },
      { _tag: "TestUser", app: "wgc_test", id: "test:alice" },
      { _tag: "Forbidden" }
    ])
  })

  it("names the same identity to the resolver as the proof does, before any sign-in", async () => {
    const outcomes = await run(
      Effect.gen(function* () {
        const auth = yield* AppAuth
        const open = yield* auth.identityOf(undefined, "tel:+14155552671")
        const forApp = yield* auth.identityOf(liveApp, "tel:+14155552671")
        const proven = yield* auth.authorise(
          liveApp,
          "tel:+14155552671",
          yield* phoneJwt("later-user", "+14155552671"),
          LIVE
        )
        const notGranted = yield* Effect.flip(auth.identityOf(testApp, "phone:5c0f3b2a-9d4e-4f6a-8b1c-2d3e4f5a6b7c"))
        const unregistered = yield* Effect.flip(auth.identityOf(undefined, "google:1"))
        return { open, forApp, proven, refused: [notGranted._tag, unregistered._tag] }
      })
    )
    const { open, forApp, proven, refused } = Result.getOrThrow(outcomes)
    expect(open).toEqual(proven)
    expect(forApp).toEqual(proven)
    expect(refused).toEqual(["Forbidden", "Forbidden"])
  })

  it("puts the token's subject in the provider's canonical form, as it does the id", async () => {
    const user = "5c0f3b2a-9d4e-4f6a-8b1c-2d3e4f5a6b7c"
    const outcomes = await run(
      Effect.gen(function* () {
        const auth = yield* AppAuth
        const attempt = (userId: string, jwt: string) =>
          auth.authorise(liveApp, userId, jwt, LIVE).pipe(
            Effect.map((identity) => identity as { readonly _tag: string }),
            Effect.catch((error) => Effect.succeed({ _tag: error._tag }))
          )
        return [
          // A subject spelt with separators, or in upper case, proves the canonical id, and the id's spellings alike.
          yield* attempt("tel:+14155552671", yield* phoneJwt(user, "+1-415-555-2671")),
          yield* attempt("tel:+1(415)555-2671", yield* phoneJwt(user, "+14155552671")),
          yield* attempt(`phone:${user}`, yield* phoneJwt(user.toUpperCase(), "+14155552671")),
          // A subject no id can take proves nobody (invisible characters); a number sign-in refuses is no id at all.
          yield* attempt("tel:+14155552671", yield* phoneJwt(user, "+14155552671\u200b")),
          yield* attempt("tel:+18005550199", yield* phoneJwt(user, "+18005550199")),
          // A non-canonical id is refused before its token is looked at.
          yield* attempt("tel:14155552671", yield* phoneJwt(user, "+14155552671"))
        ]
      })
    )
    expect(Result.getOrThrow(outcomes)).toEqual([
      { _tag: "UserWallet", provider: "tel", id: "+14155552671" },
      { _tag: "UserWallet", provider: "tel", id: "+14155552671" },
      { _tag: "UserWallet", provider: "phone", id: user },
      { _tag: "InvalidAuth" },
      { _tag: "NonCanonicalUserId" },
      { _tag: "NonCanonicalUserId" }
    ])
  })
})
