// The Redis stores' calls are client spans of the request that made them (`db.system: redis`, named by the store's
// operation, never by a key), exported over OTLP to a real receiver.
import { embeddedPorts, makeGateway } from "@walletgate/core"
import { otlpTelemetry } from "@walletgate/core/telemetry"
import { RedisStores } from "@walletgate/redis"
import * as Layer from "effect/Layer"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { attr, spansOf, startReceiver } from "../../core/test/telemetry/receiver"
import { type RedisServer, startRedisServer } from "./redis-server"

const PHONE = "+15005550006"

describe("Redis calls in a request's trace", () => {
  let redis: RedisServer
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  beforeAll(async () => {
    ;[redis, receiver] = await Promise.all([startRedisServer(), startReceiver()])
  })
  afterAll(async () => {
    await redis?.stop()
    await receiver?.stop()
  })

  it("makes a client span per Redis call, under the request's server span, with no key or phone in it", async () => {
    const gateway = makeGateway({
      ports: Layer.mergeAll(
        embeddedPorts({ otp: { testPhones: { [PHONE]: "123456" } } }),
        RedisStores.layer({ url: redis.url, keyPrefix: "otel:" })
      ),
      loggers: [],
      telemetry: otlpTelemetry({
        serviceName: "walletgate-redis-test",
        protocol: "http/json",
        traces: { url: `${receiver.url}/v1/traces`, headers: {} }
      })
    })
    try {
      const answer = await gateway.handle({
        method: "POST",
        path: "/functions/v1/signInWithOTP",
        query: new URLSearchParams(),
        headers: { "content-type": "application/json" },
        rawBody: new TextEncoder().encode(JSON.stringify({ phone: PHONE }))
      })
      expect(answer.status).toBe(200)
      await gateway.flush()
      const spans = spansOf(receiver.received)
      const server = spans.find((span) => attr(span, "http.route") === "/functions/v1/signInWithOTP")
      const stores = spans.filter((span) => attr(span, "db.system") === "redis")
      expect(stores.length).toBeGreaterThan(0)
      expect(stores.every((span) => span.kind === 3 && span.traceId === server?.traceId)).toBe(true)
      expect(stores.map((span) => span.name)).toContain("OtpStore.issue")
      const bytes = Buffer.concat(receiver.received.map((r) => r.body)).toString("utf8")
      expect(bytes).not.toContain("otel:")
      expect(bytes).not.toContain(PHONE.slice(1))
    } finally {
      await gateway.dispose()
    }
  })
})
