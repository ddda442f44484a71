import { readFileSync } from "node:fs"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { importPKCS8 } from "jose"
import type { Hex } from "viem"
import type { ClientStatuses } from "../auth/clientStatuses"
import { ExternalIssuerConfig } from "../auth/IdentityProviders"
import { SigningKeys } from "../auth/SigningKeys"
import type { NetworkConfig } from "../chain/networks"
import { resolveSpendLimits } from "../chain/SpendPolicy"
import { fieldProblems } from "../http/route"
import { SmsSender } from "../otp/SmsSender"
import {
  type NetworkSettings,
  NetworksFile,
  networkFieldExamples,
  toNetworkConfig,
  toNetworkSettings
} from "./networksFile"

/**
 * A setting of the environment that cannot be used: the message names the setting, says what is wrong and shows
 * a valid value. A secret's value is never in it. An `Error`, so that hosts (Lambda's init among them) report it
 * with its message and stack.
 */
export class ConfigurationError extends Error {
  override readonly name = "ConfigurationError"
  /** The variable at fault, e.g. `TWILIO_AUTH_TOKEN`. */
  readonly setting: string
  constructor(setting: string, message: string) {
    super(message)
    this.setting = setting
  }
}

/** How a setting is described in its errors: what a valid value is, an example, and whether its value is secret. */
interface SettingDoc {
  readonly name: string
  readonly expected: string
  readonly example: string
  readonly secret?: boolean
  /** Why it is needed, when another setting asks for it (e.g. `WALLETGATE_SMS=twilio needs it`). */
  readonly neededBy?: string
}

/**
 * The {@link ConfigurationError} of a `ConfigError` reading `doc`'s setting, whose raw text is `raw` (none when
 * the variable is unset or empty).
 */
const explain = (error: Config.ConfigError, doc: SettingDoc, raw: Option.Option<string>): ConfigurationError => {
  const cause = error.cause
  // The schema's message without the path, which only repeats the name.
  const why = cause.message.replace(/\s+at \[[^\]]*\]/g, "").replace(/\s+/g, " ")
  const detail =
    cause._tag === "SourceError"
      ? "could not be read"
      : Option.isNone(raw)
        ? "is not set"
        : // A secret's value, and a schema's message (it may quote the value), are never shown.
          doc.secret === true
          ? "is invalid"
          : `is invalid (${JSON.stringify(raw.value)}: ${why})`
  const needed = doc.neededBy === undefined ? "" : ` (${doc.neededBy})`
  return new ConfigurationError(
    doc.name,
    `${doc.name} ${detail}${needed}: expected ${doc.expected}, for example ${doc.name}=${doc.example}`
  )
}

/** Reads `config`, failing with a {@link ConfigurationError} that describes `doc`'s setting. */
const read = <A>(config: Config.Config<A>, doc: SettingDoc): Effect.Effect<A, ConfigurationError> =>
  Effect.catch(config, (error) =>
    // The variable's raw text tells unset from invalid (an empty value counts as unset).
    Config.option(Config.String(doc.name)).pipe(
      Effect.orElseSucceed(() => Option.none<string>()),
      Effect.flatMap((raw) => Effect.fail(explain(error, doc, raw)))
    )
  )

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
export const portFromEnv: Effect.Effect<number, ConfigurationError> = read(
  Config.schema(
    Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 0, maximum: 65_535 })),
    "PORT"
  ).pipe(Config.withDefault(3000)),
  { name: "PORT", expected: "a whole number from 0 to 65535 (0 picks a free port)", example: "3000" }
)

/** The interface to listen on: `HOST`, default `127.0.0.1` (set `0.0.0.0` to accept other machines). */
export const hostFromEnv: Effect.Effect<string, ConfigurationError> = read(
  Config.NonEmptyString("HOST").pipe(Config.withDefault("127.0.0.1")),
  { name: "HOST", expected: "an interface address (0.0.0.0 accepts other machines)", example: "127.0.0.1" }
)

const masterSecretDoc: SettingDoc = {
  name: "WALLETGATE_MASTER_SECRET",
  expected: "at least 32 characters, kept in a secrets manager",
  example: "<48 random bytes in base64, e.g. from: openssl rand -base64 48>",
  secret: true
}
const masterSecretConfig = Config.schema(
  Schema.String.check(Schema.isMinLength(32, { message: "Expected at least 32 characters" })),
  "WALLETGATE_MASTER_SECRET"
)

/**
 * The wallet master secret (`KeyVault.derived`): `WALLETGATE_MASTER_SECRET`, at least 32 characters, or
 * `fallback` when unset. Losing or leaking it loses or leaks every wallet: keep it in a secrets manager.
 */
export const masterSecretFromEnv = (fallback: string): Effect.Effect<string, ConfigurationError> =>
  read(masterSecretConfig.pipe(Config.withDefault(fallback)), masterSecretDoc)

/** `WALLETGATE_MASTER_SECRET` when set (at least 32 characters), else none: each process then makes its own vault. */
export const optionalMasterSecretFromEnv: Effect.Effect<Option.Option<string>, ConfigurationError> = read(
  Config.option(masterSecretConfig),
  masterSecretDoc
)

/**
 * The deployment's external identity providers: `WALLETGATE_IDENTITY_PROVIDERS`, a JSON array of
 * `{ name, issuer, audience, jwksUrl, algorithms, subjectClaim? }`; none by default. Reserved and repeated names
 * are refused when the registry is built (`IdentityProviders.make`); check a file first with
 * `walletgate providers check <file>`.
 */
export const identityProvidersFromEnv: Effect.Effect<ReadonlyArray<ExternalIssuerConfig>, ConfigurationError> = read(
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
export const operatorTokenFromEnv: Effect.Effect<Option.Option<Redacted.Redacted<string>>, ConfigurationError> = read(
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

/**
 * The statuses of refusals on the wallet routes (`kernelTx({ clientStatuses })`): `WALLETGATE_CLIENT_STATUSES`,
 * `standard` (default: RFC 6750) or `patch` (for Paymagic's Patch Wallet SDK: an invalid token 403, a refusal 422).
 */
export const clientStatusesFromEnv: Effect.Effect<ClientStatuses, ConfigurationError> = read(
  Config.Literals(["standard", "patch"], "WALLETGATE_CLIENT_STATUSES").pipe(Config.withDefault("standard" as const)),
  { name: "WALLETGATE_CLIENT_STATUSES", expected: "standard or patch", example: "patch" }
)

/** The Redis URL the state goes to: `REDIS_URL` (`redis://…`), or none to keep the state in memory. */
export const redisUrlFromEnv: Effect.Effect<Option.Option<URL>, ConfigurationError> = read(
  Config.option(Config.URL("REDIS_URL")),
  { name: "REDIS_URL", expected: "a redis:// or rediss:// URL", example: "redis://127.0.0.1:6379" }
)

/** The tokens' issuer (`iss`): `WALLETGATE_ISSUER`, default `walletgate`. */
export const issuerFromEnv: Effect.Effect<string, ConfigurationError> = read(
  Config.NonEmptyString("WALLETGATE_ISSUER").pipe(Config.withDefault("walletgate")),
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
      const privateKey = Redacted.value(key.value)
      yield* Effect.tryPromise({
        try: () => importPKCS8(privateKey, "EdDSA"),
        catch: () =>
          new ConfigurationError(
            signingKeyDoc.name,
            `${signingKeyDoc.name} is not an Ed25519 private key in PKCS#8 PEM: expected "-----BEGIN PRIVATE KEY-----" …, for example ${signingKeyDoc.name}=${signingKeyDoc.example}`
          )
      })
      return SigningKeys.fromPrivateKey({ issuer, algorithm: "EdDSA", privateKey })
    })
  )

/**
 * Who may resolve user ids to wallet addresses (`kernelTx({ resolver: { access } })`): `WALLETGATE_RESOLVER`,
 * `app` (default: an app's token required) or `open` (anyone, as Paymagic's SDK asks; it links public ids to wallets).
 */
export const resolverAccessFromEnv: Effect.Effect<"app" | "open", ConfigurationError> = read(
  Config.Literals(["app", "open"], "WALLETGATE_RESOLVER").pipe(Config.withDefault("app" as const)),
  { name: "WALLETGATE_RESOLVER", expected: "app or open", example: "open" }
)

const networksFileDoc: SettingDoc = {
  name: "WALLETGATE_NETWORKS_FILE",
  expected: "the path of a JSON file of networks (docs/networks.example.json)",
  example: "/etc/walletgate/networks.json"
}

/** Where the networks come from: a file (`WALLETGATE_NETWORKS_FILE`), the variable itself (`WALLETGATE_NETWORKS`), or none. */
const networksSource: Effect.Effect<
  { readonly setting: string; readonly where: string; readonly text: string } | undefined,
  ConfigurationError
> = Effect.gen(function* () {
  const path = yield* read(Config.option(Config.NonEmptyString("WALLETGATE_NETWORKS_FILE")), networksFileDoc)
  const inline = yield* read(Config.option(Config.NonEmptyString("WALLETGATE_NETWORKS")), {
    name: "WALLETGATE_NETWORKS",
    expected: "the networks as JSON, as the file holds them",
    example: `'${networkFieldExamples.networks}'`
  })
  if (Option.isSome(path) && Option.isSome(inline)) {
    return yield* Effect.fail(
      new ConfigurationError(
        "WALLETGATE_NETWORKS",
        "WALLETGATE_NETWORKS and WALLETGATE_NETWORKS_FILE are both set: keep one, for example WALLETGATE_NETWORKS_FILE=/etc/walletgate/networks.json"
      )
    )
  }
  if (Option.isSome(inline)) return { setting: "WALLETGATE_NETWORKS", where: "WALLETGATE_NETWORKS", text: inline.value }
  if (Option.isNone(path)) return undefined
  const file = path.value
  return yield* Effect.try({
    try: () => ({
      setting: "WALLETGATE_NETWORKS_FILE",
      where: `WALLETGATE_NETWORKS_FILE (${file})`,
      text: readFileSync(file, "utf8")
    }),
    catch: (error) =>
      new ConfigurationError(
        "WALLETGATE_NETWORKS_FILE",
        `WALLETGATE_NETWORKS_FILE (${file}) could not be read (${(error as NodeJS.ErrnoException).code ?? "error"}): expected ${networksFileDoc.expected}, for example WALLETGATE_NETWORKS_FILE=${networksFileDoc.example}`
      )
  })
})

/** The example shown for a problem at `path` (a JSON Pointer into the file): the field's, else the whole file's. */
const exampleAt = (path: string): string => {
  // /networks/<slug>/<field>/…
  const field = path.split("/")[3]
  return networkFieldExamples[field ?? ""] ?? networkFieldExamples.networks ?? ""
}

/** Options of {@link networkSettingsFromEnv}. */
export interface NetworkSettingsOptions {
  /**
   * Whether a network with a paymaster must name its address (the gateway: yes; `walletgate contracts deploy`,
   * which makes the paymaster, no).
   */
  readonly paymasterAddressRequired: boolean
}

/**
 * The networks of `WALLETGATE_NETWORKS_FILE` (a JSON file) or `WALLETGATE_NETWORKS` (the same JSON in the variable),
 * decoded by {@link NetworksFile}, with each paymaster signer key read from the variable the file names (or from the
 * file, when the operator put it there); none when neither is set. Anything unusable fails with a
 * {@link ConfigurationError} naming the file, the path inside it, what is wrong and an example; never a secret's value.
 */
export const networkSettingsFromEnv = (
  options: NetworkSettingsOptions
): Effect.Effect<ReadonlyArray<NetworkSettings>, ConfigurationError> =>
  Effect.gen(function* () {
    const source = yield* networksSource
    if (source === undefined) return []
    const invalid = (path: string, what: string) =>
      new ConfigurationError(
        source.setting,
        `${source.where} is invalid at ${path}: ${what}; for example ${exampleAt(path)} (docs/configuration.md)`
      )
    let json: unknown
    try {
      json = JSON.parse(source.text)
    } catch (error) {
      // Only where the syntax breaks: the parser's message may quote the text, and the text may hold a key.
      const at = /position \d+(?: \(line \d+ column \d+\))?/.exec(error instanceof Error ? error.message : "")
      return yield* Effect.fail(invalid("/", `not JSON (${at === null ? "a syntax error" : at[0]})`))
    }
    const decoded = Schema.decodeUnknownResult(NetworksFile)(json, { errors: "all", onExcessProperty: "error" })
    if (Result.isFailure(decoded)) {
      const problems = fieldProblems(decoded.failure.issue)
      const first = problems[0]
      const more =
        problems.length > 1
          ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? "s" : ""}: ${problems
              .slice(1, 4)
              .map((problem) => `${problem.path || "/"}: ${problem.message}`)
              .join("; ")})`
          : ""
      return yield* Effect.fail(invalid(first?.path || "/", `${first?.message ?? "invalid"}${more}`))
    }
    const networks: Array<NetworkSettings> = []
    for (const [slug, entry] of Object.entries(decoded.success.networks)) {
      const pointer = `/networks/${slug}`
      let signerKey: Hex | undefined
      if (entry.paymaster !== undefined) {
        if (options.paymasterAddressRequired && entry.paymaster.address === undefined) {
          return yield* Effect.fail(
            invalid(
              `${pointer}/paymaster/address`,
              "Required: the gateway sponsors through the paymaster at this address (walletgate contracts deploy --network <name> --new-paymaster makes one)"
            )
          )
        }
        const key = entry.paymaster.signerKey
        signerKey =
          typeof key === "string"
            ? (key as Hex)
            : (Redacted.value(
                yield* read(Config.schema(Schema.Redacted(PrivateKeyText), key.env), {
                  name: key.env,
                  expected: "a private key, 0x and 64 hex digits (secret)",
                  example: "<the paymaster signer's key, from a secrets manager>",
                  secret: true,
                  neededBy: `${source.where} names it at ${pointer}/paymaster/signerKey`
                })
                // Checked by PrivateKeyText: 0x and 64 hex digits.
              ) as Hex)
      }
      const settings = toNetworkSettings(slug, entry, signerKey)
      try {
        resolveSpendLimits(slug, settings.testnet, settings.spend)
      } catch (error) {
        return yield* Effect.fail(
          invalid(`${pointer}/spend`, error instanceof Error ? error.message : "invalid limits")
        )
      }
      if (networks.some((network) => network.chainId === settings.chainId)) {
        return yield* Effect.fail(
          invalid(`${pointer}/chainId`, `chain id ${settings.chainId} is already another network's`)
        )
      }
      networks.push(settings)
    }
    return networks
  })

/**
 * The networks the gateway serves, from `WALLETGATE_NETWORKS_FILE` or `WALLETGATE_NETWORKS` (as
 * {@link networkSettingsFromEnv} reads them; a paymaster must name its address): each with its RPC endpoints, bundler,
 * paymaster, confirmations, fee caps and spend limits, for `embeddedPorts({ networks })`; none when neither is set.
 */
export const gatewayNetworksFromEnv: Effect.Effect<
  ReadonlyArray<NetworkConfig>,
  ConfigurationError
> = networkSettingsFromEnv({ paymasterAddressRequired: true }).pipe(
  Effect.map((networks) => networks.map(toNetworkConfig))
)

const PrivateKeyText = Schema.String.check(Schema.isPattern(/^0x[0-9a-fA-F]{64}$/))

/**
 * The key of the operator's account that `walletgate contracts deploy` sends from (it pays for the deployments and
 * owns the paymaster): `WALLETGATE_DEPLOYER_KEY`, a private key (secret).
 */
export const deployerKeyFromEnv: Effect.Effect<Hex, ConfigurationError> = read(
  Config.schema(Schema.Redacted(PrivateKeyText), "WALLETGATE_DEPLOYER_KEY"),
  {
    name: "WALLETGATE_DEPLOYER_KEY",
    expected:
      "the operator's private key, 0x and 64 hex digits (secret): it pays for the deployments and owns the paymaster",
    example: "<the operator's key, from a secrets manager>",
    secret: true,
    neededBy: "walletgate contracts deploy sends from it"
  }
).pipe(Effect.map((key) => Redacted.value(key) as Hex))
