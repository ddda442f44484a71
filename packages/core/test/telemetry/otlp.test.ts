// A gateway configured by the OTEL_* variables exports its spans, metrics and logs over OTLP/HTTP JSON to a real
// receiver on 127.0.0.1: a sign-in, a kernel transaction and a payout leave the spans, attributes and metrics operators
// read, and none of the test's secrets anywhere in the bytes sent.
import { SecureRandom } from "@walletgate/core"
import { telemetryFromEnv } from "@walletgate/core/config"
import { makeApiKey } from "@walletgate/core/payout"
import { otlpTelemetry } from "@walletgate/core/telemetry"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import { parseEther } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CLIENT, freshAddress, startKernelFixture, TEST_CODE, TEST_PHONE } from "../kernel/fixture"
import { attr, type Span, spansOf, startReceiver } from "./receiver"

const OPERATOR_TOKEN = "operator-token-0123456789abcdef0123456789"
const REAL_PHONE = "+12125551234"

describe("OTLP export of a running gateway (anvil + alto)", { tags: ["devnet"] }, () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let f: Awaited<ReturnType<typeof startKernelFixture>>
  const apiKey = Effect.runSync(
    makeApiKey({ mode: "test", networks: ["anvil"], accounts: [] }).pipe(Effect.provide(SecureRandom.crypto))
  )
  const secrets: Array<string> = [CLIENT.clientSecret, TEST_CODE, OPERATOR_TOKEN, REAL_PHONE, TEST_PHONE]

  beforeAll(async () => {
    receiver = await startReceiver()
    const settings = await Effect.runPromise(
      telemetryFromEnv.pipe(
        Effect.provide(
          ConfigProvider.layer(
            ConfigProvider.fromEnvRecord({
              OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
              OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
              OTEL_SERVICE_NAME: "walletgate-test",
              OTEL_EXPORTER_OTLP_HEADERS: "x-collector-key=collector-secret"
            })
          )
        )
      )
    )
    if (settings === undefined) throw new Error("telemetry is off")
    f = await startKernelFixture({
      operatorToken: OPERATOR_TOKEN,
      telemetry: otlpTelemetry(settings),
      automation: (token) => [
        {
          accountKey: "otel",
          plan: {
            asset: token,
            recipients: [{ address: freshAddress(), shareBps: 10_000 }],
            minimumPayout: "1",
            reserve: "0"
          }
        }
      ],
      apiKeys: (accounts) => [{ ...apiKey.record, accounts: accounts.map((account) => account.address.toLowerCase()) }]
    })
    secrets.push(apiKey.key)
  })
  afterAll(async () => {
    await f?.stop()
    await receiver?.stop()
  })

  it("exports the request spans with their child spans and attributes, the metrics, and no secret", async () => {
    // A sign-in that sends an SMS (the console sender) and one of the test phone, then a kernel tx and a payout.
    expect((await f.call("POST", "/functions/v1/signInWithOTP", { phone: REAL_PHONE })).status).toBe(200)
    const user = await f.phoneUser()
    secrets.push(user.jwt)
    const wrong = await f.call("POST", "/functions/v1/verifyOTP", { phone: TEST_PHONE, token: "000000" })
    expect(wrong.status).toBeGreaterThanOrEqual(400)
    const token = await f.accessToken()
    secrets.push(token)
    const bearer = { authorization: `Bearer ${token}` }
    const wallet = await f.walletOf(user.identity)
    await f.fund(wallet, parseEther("1"))
    const sent = await f.call(
      "POST",
      "/v1/kernel/tx",
      { userId: user.userId, chain: "anvil", to: [freshAddress()], value: ["1000"], data: ["0x"], auth: user.jwt },
      bearer
    )
    expect(sent.status).toBe(200)
    expect(await f.settled(sent.body.id, bearer)).toMatchObject({ status: "confirmed" })
    const account = f.automationAccounts[0]?.address ?? ""
    await f.fund(account as `0x${string}`, 0n, 1_000_000n)
    const payout = await f.call("POST", `/v1/anvil/account/${account}/payout/disperse`, {}, { "x-api-key": apiKey.key })
    expect(payout.body).toMatchObject({ status: "submitted" })
    const health = await f.call("GET", "/v1/health", undefined, { authorization: `Bearer ${OPERATOR_TOKEN}` })
    expect(health.status).toBe(200)
    await f.gateway.flush()

    const bytes = Buffer.concat(receiver.received.map((r) => r.body)).toString("utf8")
    const paths = new Set(receiver.received.map((r) => r.path))
    expect(paths).toEqual(new Set(["/v1/traces", "/v1/metrics", "/v1/logs"]))

    const spans: Array<Span> = spansOf(receiver.received)
    const server = (route: string) => spans.filter((span) => span.kind === 2 && attr(span, "http.route") === route)
    const tx = server("/v1/kernel/tx")[0]
    expect(tx).toMatchObject({ name: "POST /v1/kernel/tx" })
    if (tx === undefined) return
    expect(tx.name).toBe("POST /v1/kernel/tx")
    expect(attr(tx, "http.request.method")).toBe("POST")
    expect(attr(tx, "url.path")).toBe("/v1/kernel/tx")
    expect(attr(tx, "http.response.status_code")).toBe("200")
    expect(attr(tx, "walletgate.request_id")).toMatch(/.+/)
    const inTx = spans.filter((span) => span.traceId === tx.traceId)
    expect(inTx.some((span) => attr(span, "walletgate.app") === CLIENT.clientId)).toBe(true)
    expect(inTx.some((span) => attr(span, "walletgate.user_op_hash") === sent.body.userOpHash)).toBe(true)
    // Child spans: the node (viem's transport) and the bundler, each a client span naming its JSON-RPC method.
    expect(inTx.some((span) => span.kind === 3 && attr(span, "rpc.method") === "eth_sendUserOperation")).toBe(true)
    expect(
      inTx.some(
        (span) =>
          span.kind === 3 &&
          attr(span, "rpc.method")?.startsWith("eth_") &&
          attr(span, "rpc.system") === "jsonrpc" &&
          span.name !== "eth_sendUserOperation"
      )
    ).toBe(true)
    expect(server("/v1/kernel/tx/:id").length).toBeGreaterThan(0)
    const payoutSpan = server("/v1/:network/account/:address/payout/disperse")[0]
    expect(payoutSpan).toMatchObject({ name: "POST /v1/:network/account/:address/payout/disperse" })
    expect(
      spans.some(
        (span) => span.traceId === payoutSpan?.traceId && attr(span, "walletgate.payout_id") === payout.body.id
      )
    ).toBe(true)

    const metricNames = new Set(
      receiver.received
        .filter((r) => r.path === "/v1/metrics")
        .flatMap((r) =>
          (
            JSON.parse(r.body.toString("utf8")) as {
              resourceMetrics: Array<{ scopeMetrics: Array<{ metrics: Array<{ name: string }> }> }>
            }
          ).resourceMetrics.flatMap((rm) => rm.scopeMetrics.flatMap((sm) => sm.metrics.map((m) => m.name)))
        )
    )
    for (const name of [
      "http.server.request.duration",
      "walletgate.sms.sent",
      "walletgate.sign_in.verified",
      "walletgate.sign_in.failed",
      "walletgate.user_operations",
      "walletgate.gas.sponsored",
      "walletgate.paymaster.deposit"
    ]) {
      expect(metricNames, name).toContain(name)
    }
    expect(bytes).toContain('"stringValue":"console"')
    expect(bytes).toContain('"stringValue":"confirmed"')

    // The same metrics as Prometheus text, to the operator alone.
    const text = await f.gateway.handle({
      method: "GET",
      path: "/v1/operator/metrics",
      query: new URLSearchParams(),
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` }
    })
    expect(text.status).toBe(200)
    expect(text.headers["content-type"]).toContain("text/plain")
    expect(text.body).toContain('walletgate_sms_sent_total{outcome="sent",provider="console"} 1')
    expect(text.body).toMatch(/walletgate_user_operations_total\{kind="kernel",status="confirmed"\} 1/)
    expect(text.body).toContain("# TYPE http_server_request_duration_seconds histogram")
    expect(
      (
        await f.gateway.handle({
          method: "GET",
          path: "/v1/operator/metrics",
          query: new URLSearchParams(),
          headers: {}
        })
      ).status
    ).toBe(404)

    // No secret anywhere in what was exported; the phone only masked (as the log masks it).
    expect(bytes).toContain("***1234")
    for (const secret of [...secrets, REAL_PHONE.slice(1), "collector-secret"]) {
      expect(bytes.includes(secret), `a secret (${secret.slice(0, 4)}…) was exported`).toBe(false)
    }
  }, 120_000)
})
