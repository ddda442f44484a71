// Without telemetry a gateway records no span: no exporting tracer is installed and Effect's own tracer is off, so
// even a tracer the ports bring sees nothing. Its metrics are still kept, for `GET /v1/operator/metrics`.
import { embeddedPorts, makeGateway } from "@walletgate/core"
import { otlpTelemetryFromEnv } from "@walletgate/core/telemetry"
import * as Layer from "effect/Layer"
import * as Tracer from "effect/Tracer"
import { describe, expect, it } from "vitest"
import { jsonCaller } from "../gatewayCall"

const OPERATOR_TOKEN = "operator-token-0123456789abcdef0123456789"

describe("a gateway without telemetry", () => {
  it.each([
    ["no telemetry option", {}],
    ["otlpTelemetryFromEnv without OTEL_* variables", { telemetry: otlpTelemetryFromEnv }]
  ])("%s: starts no span, even for a tracer its ports bring, and still counts its metrics", async (_, options) => {
    const started: Array<string> = []
    const recording = Tracer.make({
      span: (options) => {
        started.push(options.name)
        return Tracer.nativeTracer.span(options)
      }
    })
    const gateway = makeGateway({
      ports: Layer.mergeAll(embeddedPorts(), Layer.succeed(Tracer.Tracer, recording)),
      loggers: [],
      operatorToken: OPERATOR_TOKEN,
      ...options
    })
    const call = jsonCaller(gateway)
    expect((await call("POST", "/functions/v1/signInWithOTP", { phone: "+12125551234" })).status).toBe(200)
    expect((await call("POST", "/functions/v1/signInWithOTP", { phone: "+12125551234" })).status).toBe(429)
    expect((await call("POST", "/functions/v1/verifyOTP", { phone: "+12125551234", token: "000000" })).status).toBe(401)
    await gateway.flush()
    expect(started).toEqual([])
    const scrape = {
      method: "GET",
      path: "/v1/operator/metrics",
      query: new URLSearchParams(),
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` }
    }
    const metrics = { ...(await gateway.handle(scrape)), request: scrape }
    expect(metrics.status).toBe(200)
    expect(metrics.body).toContain('walletgate_sms_sent_total{outcome="sent",provider="console"} 1')
    expect(metrics.body).toContain("walletgate_sign_in_failed_total 1")
    expect(metrics.body).toContain('walletgate_rate_limited_total{limit="otp_resend"} 1')
    expect(metrics.body).not.toContain("2125551234")
    // Made-up methods on unknown paths are one series, not one each.
    for (const method of ["BREW", "WHEN", "PROPFIND"]) await gateway.handle({ ...scrape, path: "/nowhere", method })
    const again = await gateway.handle(scrape)
    expect(again.body).toContain(
      'http_server_request_duration_seconds_count{http_request_method="_OTHER",http_response_status_code="404"} 3'
    )
    expect(again.body).not.toContain("BREW")
    await gateway.dispose()
  })
})
