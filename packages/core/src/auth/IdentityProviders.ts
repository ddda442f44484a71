import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { defaultPhoneRegions, PhoneE164, type PhoneRegion } from "./phone"

/** A provider name: the `<provider>` of `userId`. */
export const ProviderName = Schema.String.check(
  Schema.isPattern(/^[a-z0-9][a-z0-9_-]{0,31}$/, { message: "Expected 1-32 of a-z, 0-9, _ and -" })
)

/** The name of the native phone sign-in: registered by walletgate itself, with the user JWT of verifyOTP. */
const PHONE_PROVIDER = "phone"

/**
 * The name of phone-number identities (`tel:+14155552671`): the wallet of a number, proven by the user JWT of
 * verifyOTP for that number, and known before its owner ever signs in.
 */
const TEL_PROVIDER = "tel"

/**
 * Names walletgate owns, which the operator cannot register: the native sign-in and its obvious aliases
 * (`phone`, `tel`, `sms`, `otp`), the other account domains (`automation`, `test`), and the names the gateway
 * uses for itself in token audiences, transaction kinds and idempotency scopes (`walletgate`, `kernel`,
 * `payout`, `relayer`, `sweeper`, `api`, `user`).
 */
export const RESERVED_PROVIDER_NAMES: ReadonlySet<string> = new Set([
  "phone",
  "tel",
  "sms",
  "otp",
  "automation",
  "test",
  "walletgate",
  "kernel",
  "payout",
  "relayer",
  "sweeper",
  "api",
  "user"
])

/** The JWS algorithms an external issuer may be pinned to. */
export const JwtAlgorithm = Schema.Literals(["RS256", "PS256", "ES256", "ES384", "EdDSA"])

const isJwksUrl = Schema.makeFilter(
  (value: string) => {
    if (!URL.canParse(value)) return false
    const url = new URL(value)
    // Plain HTTP only to this machine (tests, a sidecar): anywhere else the key set could be swapped in transit.
    const loopback = url.hostname === "localhost" || url.hostname === "127.0.0.1" || url.hostname === "[::1]"
    return url.protocol === "https:" || (url.protocol === "http:" && loopback)
  },
  { message: "Expected an https URL (http only on localhost, 127.0.0.1 or [::1])" }
)

const isRegExp = Schema.makeFilter(
  (value: string) => {
    try {
      new RegExp(value, "u")
      return true
    } catch {
      return false
    }
  },
  { message: "Expected a regular expression (Unicode mode)" }
)

/**
 * How an external provider writes its ids, declared by the operator: applied alike to the `<user_id>` of `userId`
 * (in `tx`, `sign` and `resolver`) and to the subject of the provider's tokens, so an id and its proof always name
 * one wallet. Invisible, control and bidirectional-formatting characters are refused whatever is declared.
 */
export const CanonicalForm = Schema.Struct({
  /** `lower`: ids that differ only in case are one user (e-mail addresses, most handles); `preserve` (default): case matters, as in OIDC's `sub`. */
  case: Schema.optionalKey(Schema.Literals(["lower", "preserve"])),
  /** The Unicode normalisation applied: `NFC` (default), or `NFKC`, which also folds compatibility forms (fullwidth letters, ligatures). */
  unicode: Schema.optionalKey(Schema.Literals(["NFC", "NFKC"])),
  /** A regular expression (Unicode mode) the whole canonical id must match, e.g. `[^@]+@[^@]+` for e-mail; default: any id. */
  pattern: Schema.optionalKey(
    Schema.String.check(Schema.isMaxLength(512, { message: "Expected at most 512 characters" }), isRegExp)
  )
})
/** How an external provider writes its ids. */
export type CanonicalForm = typeof CanonicalForm.Type

/** An external issuer as the operator registers it: its JWTs prove users for the provider `name`. */
export const ExternalIssuerConfig = Schema.Struct({
  /** The provider name, deployment-wide: one verifier per name. */
  name: ProviderName,
  /** The required `iss`. */
  issuer: Schema.NonEmptyString,
  /** The required `aud`. */
  audience: Schema.NonEmptyString,
  /** Where the issuer's keys are; never taken from a token's `jku`, `jwk` or `x5u`. */
  jwksUrl: Schema.String.check(isJwksUrl),
  /** The algorithms accepted; never taken from the token. */
  algorithms: Schema.Array(JwtAlgorithm).check(Schema.isMinLength(1, { message: "Expected at least 1 algorithm" })),
  /** The claim holding the user's id at the issuer; default `sub`. */
  subjectClaim: Schema.optionalKey(
    Schema.String.check(Schema.isPattern(/^[A-Za-z_][A-Za-z0-9_:.-]{0,63}$/, { message: "Expected a claim name" }))
  ),
  /** How the provider's ids are written; default `{ case: "preserve", unicode: "NFC" }`. */
  canonical: Schema.optionalKey(CanonicalForm)
})
/** An external issuer as the operator registers it. */
export type ExternalIssuerConfig = typeof ExternalIssuerConfig.Type

/**
 * How the tokens of one provider name are verified, and how its ids are written: the native phone sign-in (the
 * user's id is walletgate's user id: `phone`; or the E.164 number the token names, of a number sign-in accepts:
 * `tel`), or an external issuer with its declared canonical form.
 */
export type IdentityProvider =
  | { readonly kind: "phone"; readonly name: string }
  | {
      readonly kind: "tel"
      readonly name: string
      /** The regions whose numbers sign-in accepts. */
      readonly regions: ReadonlyArray<PhoneRegion>
      /** Sign-in's test numbers (E.164), which skip its number rules. */
      readonly testPhones: ReadonlySet<string>
    }
  | {
      readonly kind: "jwks"
      readonly name: string
      readonly issuer: string
      readonly audience: string
      readonly jwksUrl: string
      readonly algorithms: ReadonlyArray<typeof JwtAlgorithm.Type>
      readonly subjectClaim: string
      readonly canonical: {
        readonly case: "lower" | "preserve"
        readonly unicode: "NFC" | "NFKC"
        /** The declared pattern, anchored. */
        readonly pattern: RegExp | undefined
      }
    }

/**
 * The numbers `tel:` ids may name: those phone sign-in accepts (give it the sign-in's `regions` and `testPhones`),
 * so that no wallet is named for a number nobody can sign in with.
 */
export interface PhoneIdentityOptions {
  /** Regions whose numbers sign-in accepts; default US, its NANP territories and Canada. */
  readonly regions?: ReadonlyArray<PhoneRegion>
  /** Sign-in's test numbers (their E.164 forms; the keys of `otp.testPhones`). */
  readonly testPhones?: Iterable<string>
}

const decodeIssuer = Schema.decodeUnknownSync(ExternalIssuerConfig, { errors: "all" })

/**
 * The identity providers of the deployment, registered by the operator: a provider name means one
 * verifier everywhere, and apps are granted names (`App.providers`), never define them.
 */
export class IdentityProviders extends Context.Service<
  IdentityProviders,
  {
    /** The provider registered under `name`, if any. */
    readonly find: (name: string) => IdentityProvider | undefined
    /** Every registered provider, the native ones (`phone`, `tel`) first. */
    readonly all: ReadonlyArray<IdentityProvider>
  }
>()("@walletgate/core/IdentityProviders") {
  /**
   * The registry of the native phone sign-in (`tel` ids name the numbers of `phone`: sign-in's rules) and `issuers`.
   * Throws a `RangeError` at once for an invalid entry, a reserved name or a name registered twice.
   */
  static readonly make = (
    issuers: ReadonlyArray<ExternalIssuerConfig> = [],
    phone: PhoneIdentityOptions = {}
  ): IdentityProviders["Service"] => {
    const testPhones = new Set(phone.testPhones ?? [])
    for (const number of testPhones) {
      if (!Schema.is(PhoneE164)(number)) throw new RangeError(`identity providers: test phone ${number} is not E.164`)
    }
    const byName = new Map<string, IdentityProvider>([
      [PHONE_PROVIDER, { kind: "phone", name: PHONE_PROVIDER }],
      [TEL_PROVIDER, { kind: "tel", name: TEL_PROVIDER, regions: phone.regions ?? defaultPhoneRegions, testPhones }]
    ])
    for (const [index, entry] of issuers.entries()) {
      const label = `identity providers: entry ${index} ("${String(entry.name)}")`
      let config: ExternalIssuerConfig
      try {
        config = decodeIssuer(entry)
      } catch (error) {
        throw new RangeError(`${label} is invalid: ${error instanceof Error ? error.message : String(error)}`)
      }
      if (RESERVED_PROVIDER_NAMES.has(config.name)) {
        throw new RangeError(
          `${label}: the name "${config.name}" is reserved by walletgate (reserved: ${[...RESERVED_PROVIDER_NAMES].join(", ")})`
        )
      }
      if (byName.has(config.name)) {
        throw new RangeError(`${label}: the name "${config.name}" is already registered; one verifier per name`)
      }
      byName.set(config.name, {
        kind: "jwks",
        name: config.name,
        issuer: config.issuer,
        audience: config.audience,
        jwksUrl: config.jwksUrl,
        algorithms: [...config.algorithms],
        subjectClaim: config.subjectClaim ?? "sub",
        canonical: {
          case: config.canonical?.case ?? "preserve",
          unicode: config.canonical?.unicode ?? "NFC",
          pattern:
            config.canonical?.pattern === undefined ? undefined : new RegExp(`^(?:${config.canonical.pattern})$`, "u")
        }
      })
    }
    const all = [...byName.values()]
    return IdentityProviders.of({ find: (name) => byName.get(name), all })
  }

  /** The registry as a layer (see {@link IdentityProviders.make}); throws at once for a bad entry. */
  static readonly layer = (
    issuers: ReadonlyArray<ExternalIssuerConfig> = [],
    phone: PhoneIdentityOptions = {}
  ): Layer.Layer<IdentityProviders> => Layer.succeed(IdentityProviders, IdentityProviders.make(issuers, phone))
}
