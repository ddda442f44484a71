import { createPrivateKey } from "node:crypto"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type { ClientStatuses } from "../auth/clientStatuses"
import { ExternalIssuerConfig } from "../auth/IdentityProviders"
import { SigningKeys } from "../auth/SigningKeys"
import { SmsSender } from "../otp/SmsSender"
import { ConfigurationError, read, type SettingDoc, setting } from "./read"

// The settings of the server and of phone sign-in. Every value here is a description, made at import and run when
// read; each top-level call is marked pure, so a bundle keeps only the settings it reads (a function of phone sign-in
// alone: none of the identity providers' or wallets'). The networks' settings are in ./networksEnv.

/**
 * The SMS sender named by the environment (the one place that reads it):
 * `WALLETGATE_SMS=console|twilio|webhook` (default `console`); for `twilio`: `TWILIO_ACCOUNT_SID`,
 * `TWILIO_AUTH_TOKEN`, `TWILIO_FROM` (number or `MG…` sid), optional `TWILIO_API_BASE`; for `webhook`:
 * `WALLETGATE_SMS_WEBHOOK_URL`, optional `WALLETGATE_SMS_WEBHOOK_SECRET`. A missing or invalid variable
 * fails the layer with a {@link ConfigurationError} naming it.
 */
export const smsSenderFromEnv: Layer.Layer<SmsSender, ConfigurationError> = Layer.unwrap(
  Effect.gen(function* () {
    const kind = yield* read(
      Config.Literals(["console", "twilio", "webhook"], "WALLETGATE_SMS").pipe(Config.withDefault("console" as const)),
      { name: "WALLETGATE_SMS", expected: "console, twilio or webhook", example: "twilio" }
    )
    switch (kind) {
      case "console":
        return SmsSender.console()
      case "twilio": {
        const neededBy = "WALLETGATE_SMS=twilio needs it"
        const accountSid = yield* read(Config.NonEmptyString("TWILIO_ACCOUNT_SID"), {
          name: "TWILIO_ACCOUNT_SID",
          expected: "the Twilio account's SID (AC and 32 hex digits)",
          example: "AC0123456789abcdef0123456789abcdef",
          neededBy
        })
        const authToken = yield* read(Config.schema(Schema.Redacted(Schema.NonEmptyString), "TWILIO_AUTH_TOKEN"), {
          name: "TWILIO_AUTH_TOKEN",
          expected: "the Twilio account's auth token (secret)",
          example: "<the token from the Twilio console>",
          secret: true,
          neededBy
        })
        const from = yield* read(Config.NonEmptyString("TWILIO_FROM"), {
          name: "TWILIO_FROM",
          expected: "the sending number in E.164 or a Messaging Service SID (MG…)",
          example: "+15005550006",
          neededBy
        })
        const apiBase = yield* read(Config.option(Config.URL("TWILIO_API_BASE")), {
          name: "TWILIO_API_BASE",
          expected: "an https URL (optional; https://api.twilio.com when unset)",
          example: "https://api.twilio.com"
        })
        return SmsSender.twilio({
          accountSid,
          authToken: Redacted.value(authToken),
          from,
          ...Option.match(apiBase, { onNone: () => ({}), onSome: (url) => ({ apiBase: url.href }) })
        })
      }
      case "webhook": {
        const url = yield* read(Config.URL("WALLETGATE_SMS_WEBHOOK_URL"), {
          name: "WALLETGATE_SMS_WEBHOOK_URL",
          expected: "the URL that receives each message as a JSON POST",
          example: "https://sms.example.com/send",
          neededBy: "WALLETGATE_SMS=webhook needs it"
        })
        const secret = yield* read(Config.option(Config.Redacted("WALLETGATE_SMS_WEBHOOK_SECRET")), {
          name: "WALLETGATE_SMS_WEBHOOK_SECRET",
          expected: "the HMAC key the webhook's requests are signed with (optional, secret)",
          example: "<32 or more random characters>",
          secret: true
        })
        return SmsSender.webhook({
          url: url.href,
          ...Option.match(secret, { onNone: () => ({}), onSome: (value) => ({ secret: Redacted.value(value) }) })
        })
      }
    }
  })
)

/** The TCP port to listen on: `PORT`, default 3000 (0 picks a free one). */
export const portFromEnv: Effect.Effect<number, ConfigurationError> = /* @__PURE__ */ setting(
  () =>
    Config.schema(
      Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 0, maximum: 65_535 })),
      "PORT"
    ).pipe(Config.withDefault(3000)),
  { name: "PORT", expected: "a whole number from 0 to 65535 (0 picks a free port)", example: "3000" }
)

/** The interface to listen on: `HOST`, default `127.0.0.1` (set `0.0.0.0` to accept other machines). */
export const hostFromEnv: Effect.Effect<string, ConfigurationError> = /* @__PURE__ */ setting(
  () => Config.NonEmptyString("HOST").pipe(Config.withDefault("127.0.0.1")),
  { name: "HOST", expected: "an interface address (0.0.0.0 accepts other machines)", example: "127.0.0.1" }
)

const masterSecretDoc: SettingDoc = {
  name: "WALLETGATE_MASTER_SECRET",
  expected: "at least 32 characters, kept in a secrets manager",
  example: "<48 random bytes in base64, e.g. from: openssl rand -base64 48>",
  secret: true
}
const masterSecretConfig = () =>
  Config.schema(
    Schema.String.check(Schema.isMinLength(32, { message: "Expected at least 32 characters" })),
    "WALLETGATE_MASTER_SECRET"
  )

/**
 * The wallet master secret (`KeyVault.derived`): `WALLETGATE_MASTER_SECRET`, at least 32 characters, or
 * `fallback` when unset. Losing or leaking it loses or leaks every wallet: keep it in a secrets manager.
 */
export const masterSecretFromEnv = (fallback: string): Effect.Effect<string, ConfigurationError> =>
  read(masterSecretConfig().pipe(Config.withDefault(fallback)), masterSecretDoc)

/** `WALLETGATE_MASTER_SECRET` when set (at least 32 characters), else none: each process then makes its own vault. */
export const optionalMasterSecretFromEnv: Effect.Effect<
  Option.Option<string>,
  ConfigurationError
> = /* @__PURE__ */ setting(() => Config.option(masterSecretConfig()), masterSecretDoc)

/**
 * The deployment's external identity providers: `WALLETGATE_IDENTITY_PROVIDERS`, a JSON array of
 * `{ name, issuer, audience, jwksUrl, algorithms, subjectClaim? }`; none by default. Reserved and repeated names
 * are refused when the registry is built (`IdentityProviders.make`); check a file first with
 * `walletgate providers check <file>`.
 */
export const identityProvidersFromEnv: Effect.Effect<
  ReadonlyArray<ExternalIssuerConfig>,
  ConfigurationError
> = /* @__PURE__ */ setting(
  () =>
    Config.schema(Schema.fromJsonString(Schema.Array(ExternalIssuerConfig)), "WALLETGATE_IDENTITY_PROVIDERS").pipe(
      Config.withDefault([])
    ),
  {
    name: "WALLETGATE_IDENTITY_PROVIDERS",
    expected: "a JSON array of { name, issuer, audience, jwksUrl, algorithms, subjectClaim? }",
    example:
      '\'[{"name":"acme","issuer":"https://id.acme.com","audience":"walletgate","jwksUrl":"https://id.acme.com/jwks.json","algorithms":["RS256"]}]\''
  }
)

/**
 * The operator token (`makeGateway({ operatorToken })`): `WALLETGATE_OPERATOR_TOKEN`, at least 32 characters, or
 * none when unset (then nobody sees the operator's detail of `GET /v1/health`).
 */
export const operatorTokenFromEnv: Effect.Effect<
  Option.Option<Redacted.Redacted<string>>,
  ConfigurationError
> = /* @__PURE__ */ setting(
  () =>
    Config.option(
      Config.schema(
        Schema.Redacted(Schema.String.check(Schema.isMinLength(32, { message: "Expected at least 32 characters" }))),
        "WALLETGATE_OPERATOR_TOKEN"
      )
    ),
  {
    name: "WALLETGATE_OPERATOR_TOKEN",
    expected: "at least 32 characters (secret)",
    example: "<32 random bytes in hex, e.g. from: openssl rand -hex 32>",
    secret: true
  }
)

const OPERATOR_TOKEN_ENTRY = /^[A-Za-z0-9._-]{1,64}:[^\s,]{32,}$/

/**
 * The operator tokens with ids (`makeGateway({ operatorTokens })`), so that one can be rotated:
 * `WALLETGATE_OPERATOR_TOKENS`, `id:token,id:token` (ids of letters, digits, `.`, `_`, `-`; tokens of at least 32
 * characters, no comma or space); none when unset. `WALLETGATE_OPERATOR_TOKEN` stays beside it as id `default`.
 * Redacted, so that the list never reaches a log line.
 */
export const operatorTokensFromEnv: Effect.Effect<
  Redacted.Redacted<ReadonlyArray<{ readonly id: string; readonly token: string }>>,
  ConfigurationError
> = /* @__PURE__ */ setting(
  () =>
    Config.schema(
      Schema.Redacted(
        Schema.String.check(
          Schema.makeFilter((value) => value.split(",").every((entry) => OPERATOR_TOKEN_ENTRY.test(entry.trim())), {
            message: "Expected id:token pairs separated by commas, each token of at least 32 characters"
          })
        )
      ),
      "WALLETGATE_OPERATOR_TOKENS"
    ).pipe(
      Config.map((tokens) =>
        Redacted.make(
          Redacted.value(tokens)
            .split(",")
            .map((entry) => {
              const colon = entry.trim().indexOf(":")
              return { id: entry.trim().slice(0, colon), token: entry.trim().slice(colon + 1) }
            })
        )
      ),
      Config.withDefault(Redacted.make([]))
    ),
  {
    name: "WALLETGATE_OPERATOR_TOKENS",
    expected: "id:token pairs separated by commas, each token at least 32 characters (secret)",
    example: "ops-2026a:<openssl rand -hex 32>,ops-2026b:<openssl rand -hex 32>",
    secret: true
  }
)

/**
 * The statuses of refusals on the wallet routes (`kernelTx({ clientStatuses })`): `WALLETGATE_CLIENT_STATUSES`,
 * `standard` (default: RFC 6750) or `patch` (for Paymagic's Patch Wallet SDK: an invalid token 403, a refusal 422).
 */
export const clientStatusesFromEnv: Effect.Effect<ClientStatuses, ConfigurationError> = /* @__PURE__ */ setting(
  () =>
    Config.Literals(["standard", "patch"], "WALLETGATE_CLIENT_STATUSES").pipe(Config.withDefault("standard" as const)),
  { name: "WALLETGATE_CLIENT_STATUSES", expected: "standard or patch", example: "patch" }
)

/** The Redis URL the state goes to: `REDIS_URL` (`redis://…`), or none to keep the state in memory. */
export const redisUrlFromEnv: Effect.Effect<Option.Option<URL>, ConfigurationError> = /* @__PURE__ */ setting(
  () => Config.option(Config.URL("REDIS_URL")),
  { name: "REDIS_URL", expected: "a redis:// or rediss:// URL", example: "redis://127.0.0.1:6379" }
)

/**
 * What the Redis stores put before every key (`RedisStores.layer({ keyPrefix })`): `WALLETGATE_REDIS_KEY_PREFIX`, or
 * none for the stores' default (`walletgate:`). Every gateway of a fleet and the CLI that manages it use the same.
 */
export const redisKeyPrefixFromEnv: Effect.Effect<Option.Option<string>, ConfigurationError> = /* @__PURE__ */ setting(
  () =>
    Config.option(
      Config.schema(
        Schema.String.check(
          Schema.isPattern(/^[^{}\s]{1,64}$/, { message: "Expected 1 to 64 characters, no { } or space" })
        ),
        "WALLETGATE_REDIS_KEY_PREFIX"
      )
    ),
  { name: "WALLETGATE_REDIS_KEY_PREFIX", expected: "1 to 64 characters without { } or spaces", example: "walletgate:" }
)

/** The tokens' issuer (`iss`): `WALLETGATE_ISSUER`, default `walletgate`. */
export const issuerFromEnv: Effect.Effect<string, ConfigurationError> = /* @__PURE__ */ setting(
  () => Config.NonEmptyString("WALLETGATE_ISSUER").pipe(Config.withDefault("walletgate")),
  {
    name: "WALLETGATE_ISSUER",
    expected: "the issuer the tokens carry, usually a URL",
    example: "https://auth.example.com"
  }
)

const signingKeyDoc: SettingDoc = {
  name: "WALLETGATE_SIGNING_KEY",
  expected: "an Ed25519 private key in PKCS#8 PEM (secret)",
  example: '"$(openssl genpkey -algorithm ed25519)"',
  secret: true
}

/**
 * The tokens' signing key from `WALLETGATE_SIGNING_KEY` (an Ed25519 private key in PKCS#8 PEM, EdDSA), for
 * `issuer`; when unset, no layer (the embedded ephemeral key stays, one per process). A key that does not import
 * fails with a {@link ConfigurationError} naming the setting, never showing the key.
 */
export const signingKeysFromEnv = (issuer: string): Layer.Layer<never, ConfigurationError> =>
  Layer.unwrap(
    Effect.gen(function* () {
      const key = yield* read(
        Config.option(Config.schema(Schema.Redacted(Schema.NonEmptyString), "WALLETGATE_SIGNING_KEY")),
        signingKeyDoc
      )
      // Unset: no layer, so the embedded ephemeral key stays. (A layer that provides a service is one that
      // provides nothing more: its output is contravariant, so either fits `Layer<never>`.)
      if (Option.isNone(key)) return Layer.empty
      // Read once, here (node:crypto): a key that does not read as Ed25519 fails the start with the setting named.
      const notEd25519 = new ConfigurationError(
        signingKeyDoc.name,
        `${signingKeyDoc.name} is not an Ed25519 private key in PKCS#8 PEM: expected "-----BEGIN PRIVATE KEY-----" …, for example ${signingKeyDoc.name}=${signingKeyDoc.example}`
      )
      const privateKey = yield* Effect.try({
        try: () => createPrivateKey({ key: Redacted.value(key.value), format: "pem" }),
        catch: () => notEd25519
      })
      if (privateKey.asymmetricKeyType !== "ed25519") return yield* Effect.fail(notEd25519)
      return SigningKeys.fromPrivateKey({ issuer, algorithm: "EdDSA", privateKey })
    })
  )

/**
 * Who may resolve user ids to wallet addresses (`kernelTx({ resolver: { access } })`): `WALLETGATE_RESOLVER`,
 * `app` (default: an app's token required) or `open` (anyone, as Paymagic's SDK asks; it links public ids to wallets).
 */
export const resolverAccessFromEnv: Effect.Effect<"app" | "open", ConfigurationError> = /* @__PURE__ */ setting(
  () => Config.Literals(["app", "open"], "WALLETGATE_RESOLVER").pipe(Config.withDefault("app" as const)),
  { name: "WALLETGATE_RESOLVER", expected: "app or open", example: "open" }
)
