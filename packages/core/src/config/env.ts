import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type { ClientStatuses } from "../auth/clientStatuses"
import { ExternalIssuerConfig } from "../auth/IdentityProviders"
import { SmsSender } from "../otp/SmsSender"

/**
 * The SMS sender named by the environment (the one place that reads it):
 * `WALLETGATE_SMS=console|twilio|webhook` (default `console`); for `twilio`: `TWILIO_ACCOUNT_SID`,
 * `TWILIO_AUTH_TOKEN`, `TWILIO_FROM` (number or `MG…` sid), optional `TWILIO_API_BASE`; for `webhook`:
 * `WALLETGATE_SMS_WEBHOOK_URL`, optional `WALLETGATE_SMS_WEBHOOK_SECRET`. A missing or invalid variable
 * fails the layer with a `ConfigError` naming it.
 */
export const smsSenderFromEnv: Layer.Layer<SmsSender, Config.ConfigError> = Layer.unwrap(
  Effect.gen(function* () {
    const kind = yield* Config.Literals(["console", "twilio", "webhook"], "WALLETGATE_SMS").pipe(
      Config.withDefault("console" as const)
    )
    switch (kind) {
      case "console":
        return SmsSender.console()
      case "twilio": {
        const accountSid = yield* Config.NonEmptyString("TWILIO_ACCOUNT_SID")
        const authToken = yield* Config.Redacted("TWILIO_AUTH_TOKEN")
        const from = yield* Config.NonEmptyString("TWILIO_FROM")
        const apiBase = yield* Config.option(Config.URL("TWILIO_API_BASE"))
        return SmsSender.twilio({
          accountSid,
          authToken: Redacted.value(authToken),
          from,
          ...Option.match(apiBase, { onNone: () => ({}), onSome: (url) => ({ apiBase: url.href }) })
        })
      }
      case "webhook": {
        const url = yield* Config.URL("WALLETGATE_SMS_WEBHOOK_URL")
        const secret = yield* Config.option(Config.Redacted("WALLETGATE_SMS_WEBHOOK_SECRET"))
        return SmsSender.webhook({
          url: url.href,
          ...Option.match(secret, { onNone: () => ({}), onSome: (value) => ({ secret: Redacted.value(value) }) })
        })
      }
    }
  })
)

/** The TCP port to listen on: `PORT`, default 3000 (0 picks a free one). */
export const portFromEnv: Config.Config<number> = Config.schema(
  Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 0, maximum: 65_535 })),
  "PORT"
).pipe(Config.withDefault(3000))

/** The interface to listen on: `HOST`, default `127.0.0.1` (set `0.0.0.0` to accept other machines). */
export const hostFromEnv: Config.Config<string> = Config.NonEmptyString("HOST").pipe(Config.withDefault("127.0.0.1"))

/**
 * The wallet master secret (`KeyVault.derived`): `WALLETGATE_MASTER_SECRET`, at least 32 characters, or
 * `fallback` when unset. Losing or leaking it loses or leaks every wallet: keep it in a secrets manager.
 */
export const masterSecretFromEnv = (fallback: string): Config.Config<string> =>
  Config.schema(
    Schema.String.check(Schema.isMinLength(32, { message: "Expected at least 32 characters" })),
    "WALLETGATE_MASTER_SECRET"
  ).pipe(Config.withDefault(fallback))

/**
 * The deployment's external identity providers: `WALLETGATE_IDENTITY_PROVIDERS`, a JSON array of
 * `{ name, issuer, audience, jwksUrl, algorithms, subjectClaim? }`; none by default. Reserved and repeated names
 * are refused when the registry is built (`IdentityProviders.make`); check a file first with
 * `walletgate providers check <file>`.
 */
export const identityProvidersFromEnv: Config.Config<ReadonlyArray<ExternalIssuerConfig>> = Config.schema(
  Schema.fromJsonString(Schema.Array(ExternalIssuerConfig)),
  "WALLETGATE_IDENTITY_PROVIDERS"
).pipe(Config.withDefault([]))

/**
 * The operator token (`makeGateway({ operatorToken })`): `WALLETGATE_OPERATOR_TOKEN`, at least 32 characters, or
 * none when unset (then nobody sees the operator's detail of `GET /v1/health`).
 */
export const operatorTokenFromEnv: Config.Config<Option.Option<Redacted.Redacted<string>>> = Config.option(
  Config.schema(
    Schema.Redacted(Schema.String.check(Schema.isMinLength(32, { message: "Expected at least 32 characters" }))),
    "WALLETGATE_OPERATOR_TOKEN"
  )
)

/**
 * The statuses of refusals on the wallet routes (`kernelTx({ clientStatuses })`): `WALLETGATE_CLIENT_STATUSES`,
 * `standard` (default: RFC 6750) or `patch` (for Paymagic's Patch Wallet SDK: an invalid token 403, a refusal 422).
 */
export const clientStatusesFromEnv: Config.Config<ClientStatuses> = Config.Literals(
  ["standard", "patch"],
  "WALLETGATE_CLIENT_STATUSES"
).pipe(Config.withDefault("standard" as const))
