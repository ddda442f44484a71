// `@walletgate/core/telemetry`: exporting a gateway's spans, metrics and logs over OTLP/HTTP (Effect's own exporters),
// and its metrics as Prometheus text. Settings come from `telemetryFromEnv` (`@walletgate/core/config`).
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as OtlpExporter from "effect/observability/OtlpExporter"
import * as OtlpLogger from "effect/observability/OtlpLogger"
import * as OtlpMetrics from "effect/observability/OtlpMetrics"
import * as OtlpSerialization from "effect/observability/OtlpSerialization"
import * as OtlpTracer from "effect/observability/OtlpTracer"
import * as References from "effect/References"
import * as Tracer from "effect/Tracer"
import type { ConfigurationError } from "../config/read"
import { telemetryFromEnv } from "../config/telemetry"
import { Telemetry, type TelemetrySettings, withActiveFiber } from "../internal/telemetry"

export { PROMETHEUS_CONTENT_TYPE, prometheusText } from "../internal/prometheus"
export { type OtlpTarget, Telemetry, type TelemetrySettings } from "../internal/telemetry"

/** What Effect's exporters are built on. */
type ExporterNeeds = OtlpExporter.Flusher | OtlpSerialization.OtlpSerialization | HttpClient.HttpClient

/**
 * The layer of `makeGateway({ telemetry })`: Effect's OTLP tracer, metrics and logger for the signals `settings` name,
 * over `fetch`. Reads no environment itself (the resource is `settings`' alone).
 */
export const otlpTelemetry = (settings: TelemetrySettings): Layer.Layer<Telemetry> => {
  const resource = {
    serviceName: settings.serviceName,
    ...(settings.resourceAttributes === undefined ? {} : { attributes: { ...settings.resourceAttributes } })
  }
  const onAnswer = settings.flushBeforeAnswerMs !== undefined
  // On Lambda the exporters' timers never fire: everything goes in the flush before the answer.
  const every = (ms: number) => (onAnswer ? Duration.infinity : Duration.millis(settings.exportIntervalMs ?? ms))
  const exporters: Array<Layer.Layer<never, never, ExporterNeeds>> = []
  const { traces, metrics, logs } = settings
  if (traces !== undefined) {
    exporters.push(
      Layer.effect(
        Tracer.Tracer,
        Effect.map(
          OtlpTracer.make({ url: traces.url, headers: traces.headers, resource, exportInterval: every(5000) }),
          withActiveFiber
        )
      ) as Layer.Layer<never, never, ExporterNeeds>
    )
  }
  if (metrics !== undefined) {
    exporters.push(
      Layer.effectDiscard(
        OtlpMetrics.make({ url: metrics.url, headers: metrics.headers, resource, exportInterval: every(10_000) })
      )
    )
  }
  if (logs !== undefined) {
    exporters.push(
      Logger.layer([OtlpLogger.make({ url: logs.url, headers: logs.headers, resource, exportInterval: every(1000) })], {
        mergeWithExisting: true
      })
    )
  }
  const service = Layer.effect(
    Telemetry,
    Effect.map(Effect.service(OtlpExporter.Flusher), (flusher) =>
      Telemetry.of({ flush: flusher.flush, flushBeforeAnswerMs: settings.flushBeforeAnswerMs })
    )
  )
  return Layer.mergeAll(service, ...exporters, Layer.succeed(References.TracerEnabled, traces !== undefined)).pipe(
    Layer.provide(OtlpExporter.layerFlusher),
    Layer.provide(settings.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
    Layer.provide(FetchHttpClient.layer),
    // The resource is the settings' alone: Effect's exporters would otherwise read OTEL_* themselves.
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({})))
  )
}

/** Telemetry off: no exporter, Effect's tracer off (no span is made), nothing to flush. */
export const telemetryOff: Layer.Layer<Telemetry> = Layer.mergeAll(
  Layer.succeed(Telemetry, Telemetry.of({ flush: Effect.void, flushBeforeAnswerMs: undefined })),
  Layer.succeed(References.TracerEnabled, false)
)

/**
 * The telemetry the OTEL_* variables describe (`telemetryFromEnv`), read when the gateway starts: {@link otlpTelemetry}
 * of them, or {@link telemetryOff} when none is set. `makeGateway({ telemetry: otlpTelemetryFromEnv })`.
 */
export const otlpTelemetryFromEnv: Layer.Layer<Telemetry, ConfigurationError> = Layer.unwrap(
  Effect.map(telemetryFromEnv, (settings) => (settings === undefined ? telemetryOff : otlpTelemetry(settings)))
)
