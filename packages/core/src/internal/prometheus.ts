import type * as Effect from "effect/Effect"
import * as PrometheusMetrics from "effect/observability/PrometheusMetrics"
import { prometheusNames } from "./telemetry"

/**
 * The gateway's metrics in Prometheus' text format (0.0.4), under Prometheus names: `walletgate_sms_sent_total`,
 * `http_server_request_duration_seconds`, … Run on the gateway's services (a route's effect): each gateway keeps its
 * own registry.
 */
export const prometheusText: Effect.Effect<string> = PrometheusMetrics.format({
  metricNameMapper: (name) => prometheusNames[name] ?? name
})

/** The content type of {@link prometheusText}. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
