import { createHash, createPrivateKey, createPublicKey, type KeyObject } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import {
  calculateJwkThumbprint,
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  type JWTPayload,
  jwtVerify,
  SignJWT
} from "jose"
import { TokenRejected } from "./errors"

/** The asymmetric algorithms walletgate signs with; verification pins the one configured. */
export type SigningAlgorithm = "EdDSA" | "ES256"

/** What to sign: the registered claims are always set, from these and the clock. */
export interface TokenClaims {
  readonly subject: string
  readonly audience: string
  /** The JOSE `typ` header, which keeps one kind of token from passing for another. */
  readonly type: string
  readonly ttlSeconds: number
  readonly extra?: Readonly<Record<string, string | number | boolean>>
}

/** What a token must be to verify. */
export interface TokenExpectation {
  readonly audience: string
  readonly type: string
}

/** A JSON Web Key Set as published at `/.well-known/jwks.json`. */
export interface JsonWebKeySet {
  readonly keys: ReadonlyArray<JWK>
}

/** Clock skew tolerated when checking `exp`, `iat` and `nbf` (at most 30 s). */
export const CLOCK_TOLERANCE_SECONDS = 30

/**
 * The gateway's JWT signing key: signs the tokens it issues, verifies them, and publishes the public
 * half as a JWKS. Verification pins the algorithm and requires `iss`, `aud`, `sub`, `exp` and `iat`;
 * keys never come from a token's own `jku`, `jwk` or `x5u` headers.
 */
export class SigningKeys extends Context.Service<
  SigningKeys,
  {
    /** The `iss` of every token signed here. */
    readonly issuer: string
    /** The public keys, to publish. */
    readonly jwks: Effect.Effect<JsonWebKeySet>
    /** Signs `claims`; returns the compact JWT and its expiry (epoch seconds). */
    readonly sign: (claims: TokenClaims) => Effect.Effect<{ readonly token: string; readonly expiresAt: number }>
    /** Verifies a token signed here against `expected`. */
    readonly verify: (token: string, expected: TokenExpectation) => Effect.Effect<JWTPayload, TokenRejected>
  }
>()("@walletgate/core/SigningKeys") {
  /**
   * A key pair made when first used and never stored: tokens die with the process, and several instances
   * cannot verify each other's tokens. For development and tests; it says so in the log when it makes the pair.
   * Made at first use rather than at start because the embedded ports carry it under a configured key (a later
   * layer wins): built, never used, it makes no key pair and warns of none.
   */
  static readonly ephemeral = (options: { readonly issuer: string; readonly algorithm?: SigningAlgorithm }) =>
    Layer.effect(
      SigningKeys,
      Effect.gen(function* () {
        const algorithm = options.algorithm ?? "EdDSA"
        const keys = yield* Effect.cached(
          Effect.gen(function* () {
            const pair = yield* Effect.promise(() => generateKeyPair(algorithm, { extractable: true }))
            const publicJwk = yield* Effect.promise(() => exportJWK(pair.publicKey))
            yield* Effect.logWarning("walletgate: using an ephemeral JWT signing key; configure one for production")
            return yield* makeSigningKeys(options.issuer, algorithm, pair.privateKey, publicJwk)
          })
        )
        return SigningKeys.of({
          issuer: options.issuer,
          jwks: Effect.flatMap(keys, (made) => made.jwks),
          sign: (claims) => Effect.flatMap(keys, (made) => made.sign(claims)),
          verify: (token, expected) => Effect.flatMap(keys, (made) => made.verify(token, expected))
        })
      })
    )

  /**
   * A configured private key: a JWK (with its `alg`, or given), a PKCS#8 PEM string or a node `KeyObject` (read with
   * node:crypto, turned into a WebCrypto key on the first signature), or a WebCrypto key already imported
   * (extractable, to publish its public half).
   */
  static readonly fromPrivateKey = (options: {
    readonly issuer: string
    readonly algorithm: SigningAlgorithm
    readonly privateKey: JWK | string | CryptoKey | KeyObject
  }) =>
    Layer.effect(
      SigningKeys,
      Effect.gen(function* () {
        const { algorithm, privateKey } = options
        if (typeof privateKey === "string" || isKeyObject(privateKey)) {
          // Read with node:crypto, which is loaded anyway: WebCrypto's key import (≈ 3–9 ms of a cold start, most of
          // it loading node's WebCrypto key code) waits for the first signature, which jose makes from the KeyObject.
          const refused = new TypeError(`the signing key is not a private ${algorithm} key (PKCS#8 PEM)`)
          const key = yield* Effect.try({
            try: () => (typeof privateKey === "string" ? createPrivateKey(privateKey) : privateKey),
            catch: () => refused
          }).pipe(Effect.orDie)
          if (!fitsAlgorithm(key, algorithm)) return yield* Effect.die(refused)
          return yield* makeSigningKeys(options.issuer, algorithm, key, publicJwkOf(key))
        }
        const key = yield* Effect.promise(async () =>
          privateKey instanceof CryptoKey ? privateKey : importJWK(privateKey, algorithm, { extractable: true })
        )
        if (key instanceof Uint8Array) return yield* Effect.die(new TypeError("a symmetric key cannot sign"))
        const {
          d: _d,
          p: _p,
          q: _q,
          dp: _dp,
          dq: _dq,
          qi: _qi,
          ...publicJwk
        } = yield* Effect.promise(() => exportJWK(key))
        return yield* makeSigningKeys(options.issuer, algorithm, key, publicJwk)
      })
    )
}

const isKeyObject = (key: JWK | CryptoKey | KeyObject): key is KeyObject =>
  "asymmetricKeyType" in key && typeof key.export === "function"

/** Whether `key` is a private key of `algorithm`: Ed25519 for EdDSA, P-256 for ES256. */
const fitsAlgorithm = (key: KeyObject, algorithm: SigningAlgorithm) =>
  key.type === "private" &&
  (algorithm === "EdDSA"
    ? key.asymmetricKeyType === "ed25519"
    : key.asymmetricKeyType === "ec" && key.asymmetricKeyDetails?.namedCurve === "prime256v1")

/** The public half of a node private key as a JWK with its RFC 7638 thumbprint as `kid`, by node:crypto alone. */
const publicJwkOf = (key: KeyObject): JWK => {
  const jwk = createPublicKey(key).export({ format: "jwk" })
  // RFC 7638: the required members in lexicographic order, no whitespace (OKP: crv, kty, x; EC: crv, kty, x, y).
  const members =
    jwk.kty === "EC" ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y } : { crv: jwk.crv, kty: jwk.kty, x: jwk.x }
  return { ...jwk, kid: createHash("sha256").update(JSON.stringify(members)).digest("base64url") }
}

const makeSigningKeys = (
  issuer: string,
  algorithm: SigningAlgorithm,
  privateKey: CryptoKey | KeyObject,
  publicJwk: JWK
) =>
  Effect.gen(function* () {
    const kid = publicJwk.kid ?? (yield* Effect.promise(() => calculateJwkThumbprint(publicJwk)))
    const published: JWK = { ...publicJwk, kid, alg: algorithm, use: "sig" }
    const jwks = { keys: [published] }
    const keySet = createLocalJWKSet({ keys: [published] })
    return SigningKeys.of({
      issuer,
      jwks: Effect.succeed(jwks),
      sign: Effect.fnUntraced(function* (claims: TokenClaims) {
        const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        const expiresAt = now + claims.ttlSeconds
        const token = yield* Effect.promise(() =>
          new SignJWT({ ...claims.extra })
            .setProtectedHeader({ alg: algorithm, kid, typ: claims.type })
            .setIssuer(issuer)
            .setAudience(claims.audience)
            .setSubject(claims.subject)
            .setIssuedAt(now)
            .setExpirationTime(expiresAt)
            .sign(privateKey)
        )
        return { token, expiresAt }
      }),
      verify: Effect.fnUntraced(function* (token: string, expected: TokenExpectation) {
        const now = yield* Clock.currentTimeMillis
        const { payload } = yield* Effect.tryPromise({
          try: () =>
            jwtVerify(token, keySet, {
              algorithms: [algorithm],
              issuer,
              audience: expected.audience,
              typ: expected.type,
              requiredClaims: ["iss", "aud", "sub", "exp", "iat"],
              clockTolerance: CLOCK_TOLERANCE_SECONDS,
              currentDate: new Date(now)
            }),
          catch: (error) => new TokenRejected({ reason: joseReason(error) })
        })
        return payload
      })
    })
  })

/** A jose error's code (`ERR_JWT_EXPIRED`, …), which never contains the token. */
export const joseReason = (error: unknown): string =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : "ERR_JWT_INVALID"
