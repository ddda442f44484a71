// The OTEL_* variables as telemetryFromEnv reads them: off when no endpoint is set, per-signal endpoints used as is,
// the base one with /v1/<signal> appended, `none` per signal, and a bad value named without a secret's value.
import { ConfigurationError, telemetryFromEnv } from "@walletgate/core/config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"

const read = (env: Record<string, string>) =>
  Effect.runPromise(
    telemetryFromEnv.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env))), Effect.result)
  )
/** The settings read, or the error's class name. */
const settings = async (env: Record<string, string>) => {
  const result = await read(env)
  return result._tag === "Success" ? result.success : result.failure.name
}

describe("telemetryFromEnv", () => {
  it("is off when no endpoint is set, or when OTEL_SDK_DISABLED=true", async () => {
    expect(await settings({ OTEL_SERVICE_NAME: "x" })).toBeUndefined()
    expect(
      await settings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_SDK_DISABLED: "true" })
    ).toBeUndefined()
    expect(await settings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" })).toMatchObject({
      protocol: "http/protobuf",
      serviceName: "walletgate"
    })
  })

  it("appends /v1/<signal> to the base endpoint, takes a signal's own as is, and drops a signal set to none", async () => {
    const result = await settings({
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector.example.com/otlp/",
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "https://metrics.example.com/ingest",
      OTEL_LOGS_EXPORTER: "none",
      OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=a%20b,x-team=ops",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod",
      WALLETGATE_TELEMETRY_FLUSH_MS: "500"
    })
    expect(result).toEqual({
      serviceName: "walletgate",
      protocol: "http/json",
      resourceAttributes: { "deployment.environment": "prod" },
      traces: {
        url: "https://collector.example.com/otlp/v1/traces",
        headers: { "x-api-key": "a b", "x-team": "ops" }
      },
      metrics: { url: "https://metrics.example.com/ingest", headers: { "x-api-key": "a b", "x-team": "ops" } },
      flushBeforeAnswerMs: 500
    })
  })

  it("refuses gRPC and a malformed header list, naming the variable and never the headers' value", async () => {
    const grpc = await read({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4317",
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc"
    })
    expect(grpc._tag).toBe("Failure")
    if (grpc._tag === "Failure") expect(grpc.failure.setting).toBe("OTEL_EXPORTER_OTLP_PROTOCOL")
    const headers = await read({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318",
      OTEL_EXPORTER_OTLP_HEADERS: "secret-collector-key"
    })
    expect(headers._tag).toBe("Failure")
    if (headers._tag === "Failure") {
      expect(headers.failure).toBeInstanceOf(ConfigurationError)
      expect(headers.failure.message).toContain("OTEL_EXPORTER_OTLP_HEADERS")
      expect(headers.failure.message).not.toContain("secret-collector-key")
    }
  })
})
