import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type { OtlpTarget, TelemetrySettings } from "../internal/telemetry"
import { ConfigurationError, read } from "./read"

/** The signals, as the OTEL_* variables name them. */
const SIGNALS = ["TRACES", "METRICS", "LOGS"] as const
type Signal = (typeof SIGNALS)[number]

const optionalString = (name: string) => read(Config.option(Config.NonEmptyString(name)), doc(name))

const doc = (name: string) => ({
  name,
  expected: "a value of the OpenTelemetry specification (docs/configuration.md#telemetry)",
  example: "http://127.0.0.1:4318"
})

/** `key=value,key2=value2` with URL-encoded values (W3C Baggage form, as OTEL_EXPORTER_OTLP_HEADERS is written). */
const parseHeaders = (name: string, text: string): Effect.Effect<Record<string, string>, ConfigurationError> => {
  const headers: Record<string, string> = {}
  for (const entry of text.split(",")) {
    if (entry.trim() === "") continue
    const at = entry.indexOf("=")
    const key = at === -1 ? "" : entry.slice(0, at).trim().toLowerCase()
    let value: string | undefined
    try {
      value = at === -1 ? undefined : decodeURIComponent(entry.slice(at + 1).trim())
    } catch {
      value = undefined
    }
    // The value may hold a collector's API key: it is never shown.
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(key) || value === undefined) {
      return Effect.fail(
        new ConfigurationError(
          name,
          `${name} is invalid: expected key=value pairs separated by commas, for example ${name}=x-api-key=abc`
        )
      )
    }
    headers[key] = value
  }
  return Effect.succeed(headers)
}

/** The endpoint URL of `signal`: its own variable as is, else the base one with `/v1/<signal>` appended. */
const targetOf = (signal: Signal): Effect.Effect<OtlpTarget | undefined, ConfigurationError> =>
  Effect.gen(function* () {
    const exporter = yield* optionalString(`OTEL_${signal}_EXPORTER`)
    if (Option.isSome(exporter) && exporter.value.trim().toLowerCase() === "none") return undefined
    if (Option.isSome(exporter) && exporter.value.trim().toLowerCase() !== "otlp") {
      return yield* Effect.fail(
        new ConfigurationError(
          `OTEL_${signal}_EXPORTER`,
          `OTEL_${signal}_EXPORTER is invalid (${JSON.stringify(exporter.value)}): expected otlp or none, for example OTEL_${signal}_EXPORTER=none`
        )
      )
    }
    const own = yield* read(Config.option(Config.URL(`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`)), {
      ...doc(`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`),
      expected: "an http(s) URL, used as is",
      example: `http://127.0.0.1:4318/v1/${signal.toLowerCase()}`
    })
    const base = yield* read(Config.option(Config.URL("OTEL_EXPORTER_OTLP_ENDPOINT")), {
      ...doc("OTEL_EXPORTER_OTLP_ENDPOINT"),
      expected: "an http(s) URL; /v1/traces, /v1/metrics and /v1/logs are appended"
    })
    const url = Option.isSome(own)
      ? own.value
      : Option.map(base, (root) => {
          const joined = new URL(root.href)
          joined.pathname = `${joined.pathname.replace(/\/$/, "")}/v1/${signal.toLowerCase()}`
          return joined
        }).pipe(Option.getOrUndefined)
    if (url === undefined) return undefined
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      return yield* Effect.fail(
        new ConfigurationError(
          "OTEL_EXPORTER_OTLP_ENDPOINT",
          "OTEL_EXPORTER_OTLP_ENDPOINT is invalid: expected an http(s) URL (OTLP/HTTP), for example OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318"
        )
      )
    }
    const secretHeaders = (name: string) =>
      read(Config.option(Config.schema(Schema.Redacted(Schema.NonEmptyString), name)), {
        ...doc(name),
        expected: "key=value pairs separated by commas (secret)",
        example: "x-api-key=abc",
        secret: true
      })
    const ownHeaders = yield* secretHeaders(`OTEL_EXPORTER_OTLP_${signal}_HEADERS`)
    const baseHeaders = yield* secretHeaders("OTEL_EXPORTER_OTLP_HEADERS")
    const headers = Option.isSome(ownHeaders)
      ? yield* parseHeaders(`OTEL_EXPORTER_OTLP_${signal}_HEADERS`, Redacted.value(ownHeaders.value))
      : Option.isSome(baseHeaders)
        ? yield* parseHeaders("OTEL_EXPORTER_OTLP_HEADERS", Redacted.value(baseHeaders.value))
        : {}
    return { url: url.href, headers }
  })

/**
 * The gateway's telemetry named by the standard OpenTelemetry variables, or none (telemetry off) when no endpoint is
 * set or `OTEL_SDK_DISABLED=true`: `OTEL_EXPORTER_OTLP_ENDPOINT` (and the per-signal
 * `OTEL_EXPORTER_OTLP_{TRACES,METRICS,LOGS}_ENDPOINT`, `OTEL_{TRACES,METRICS,LOGS}_EXPORTER=none`),
 * `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf`, default, or `http/json`), `OTEL_EXPORTER_OTLP_HEADERS` (and per
 * signal), `OTEL_SERVICE_NAME` (default `walletgate`), `OTEL_RESOURCE_ATTRIBUTES`; and
 * `WALLETGATE_TELEMETRY_FLUSH_MS`: flush before every answer within that many ms (Lambda).
 */
export const telemetryFromEnv: Effect.Effect<TelemetrySettings | undefined, ConfigurationError> = Effect.gen(
  function* () {
    const disabled = yield* read(Config.Boolean("OTEL_SDK_DISABLED").pipe(Config.withDefault(false)), {
      ...doc("OTEL_SDK_DISABLED"),
      expected: "true or false",
      example: "true"
    })
    if (disabled) return undefined
    const [traces, metrics, logs] = yield* Effect.all(SIGNALS.map(targetOf))
    if (traces === undefined && metrics === undefined && logs === undefined) return undefined
    const protocol = yield* read(
      Config.Literals(["http/protobuf", "http/json"], "OTEL_EXPORTER_OTLP_PROTOCOL").pipe(
        Config.withDefault("http/protobuf" as const)
      ),
      {
        name: "OTEL_EXPORTER_OTLP_PROTOCOL",
        expected: "http/protobuf or http/json (gRPC is not served)",
        example: "http/json"
      }
    )
    const serviceName = Option.getOrElse(yield* optionalString("OTEL_SERVICE_NAME"), () => "walletgate")
    const attributesText = yield* optionalString("OTEL_RESOURCE_ATTRIBUTES")
    const resourceAttributes = Option.isSome(attributesText)
      ? yield* parseHeaders("OTEL_RESOURCE_ATTRIBUTES", attributesText.value)
      : undefined
    const flush = yield* read(Config.option(Config.Int("WALLETGATE_TELEMETRY_FLUSH_MS")), {
      name: "WALLETGATE_TELEMETRY_FLUSH_MS",
      expected: "a whole number of ms from 1 to 10000",
      example: "1000"
    })
    if (Option.isSome(flush) && (flush.value < 1 || flush.value > 10_000)) {
      return yield* Effect.fail(
        new ConfigurationError(
          "WALLETGATE_TELEMETRY_FLUSH_MS",
          `WALLETGATE_TELEMETRY_FLUSH_MS is invalid (${flush.value}): expected a whole number of ms from 1 to 10000, for example WALLETGATE_TELEMETRY_FLUSH_MS=1000`
        )
      )
    }
    return {
      serviceName,
      protocol,
      ...(resourceAttributes === undefined ? {} : { resourceAttributes }),
      ...(traces === undefined ? {} : { traces }),
      ...(metrics === undefined ? {} : { metrics }),
      ...(logs === undefined ? {} : { logs }),
      ...(Option.isSome(flush) ? { flushBeforeAnswerMs: flush.value } : {})
    } satisfies TelemetrySettings
  }
)
