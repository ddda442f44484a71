import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

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
export interface SettingDoc {
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
export const read = <A>(config: Config.Config<A>, doc: SettingDoc): Effect.Effect<A, ConfigurationError> =>
  Effect.catch(config, (error) =>
    // The variable's raw text tells unset from invalid (an empty value counts as unset).
    Config.option(Config.String(doc.name)).pipe(
      Effect.orElseSucceed(() => Option.none<string>()),
      Effect.flatMap((raw) => Effect.fail(explain(error, doc, raw)))
    )
  )

/**
 * A setting read when its effect runs: its `Config`, and the schema under it, is built then, not when the module is
 * imported. Exported settings are declared `/* @__PURE__ *\/ setting(…)`, so a bundle drops those it never reads, and
 * a function's init builds only the ones it reads.
 */
export const setting = <A>(config: () => Config.Config<A>, doc: SettingDoc): Effect.Effect<A, ConfigurationError> =>
  Effect.suspend(() => read(config(), doc))
