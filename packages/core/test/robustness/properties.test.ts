import {
  embeddedPorts,
  type GatewayRequest,
  type GatewayResponse,
  makeGateway,
  standardModules
} from "@walletgate/core"
import { readBodyWithin } from "@walletgate/core/adapter"
import { hashClientSecret } from "@walletgate/core/auth"
import { Layer } from "effect"
import fc from "fast-check"
import { afterAll, describe, expect, it } from "vitest"
import { makeProblemTable } from "../../src/http/problemTable"
import { hashApiKey } from "../../src/payout/ApiKeys"
import { countingPorts } from "./countingPorts"

const API_KEY = "wg_test_robustness_key_0000000000000000000000000000000"
const ACCOUNT = "0x000000000000000000000000000000000000dEaD"
const counting = countingPorts()
const gateway = makeGateway({
  ports: Layer.mergeAll(
    embeddedPorts({
      otp: { testPhones: { "+15005550006": "123456" }, sendsPerIpPerHour: 1_000_000, sendsPerPhone: 1_000_000 },
      apps: [
        {
          clientId: "app",
          secretHash: hashClientSecret("secret"),
          providers: ["phone"],
          testMode: true
        }
      ],
      apiKeys: [
        {
          id: API_KEY.slice(8, 20),
          mode: "test",
          hash: hashApiKey(API_KEY),
          networks: ["anvil"],
          accounts: [ACCOUNT.toLowerCase()],
          createdAt: 0
        }
      ]
    }),
    counting.layer
  ),
  loggers: [],
  bodyLimit: 16 * 1024
})
afterAll(() => gateway.dispose())

const PROBLEM_CODES = new Set<string>([
  ...[...makeProblemTable(standardModules().map((module) => module.problems)).values()].map((entry) => entry.code),
  "internal_error"
])
const OAUTH_ERRORS = new Set(["invalid_request", "invalid_client", "unsupported_grant_type", "invalid_scope"])

/** Codes of requests refused for their form, before any domain logic: such a request changes no state. */
const FORM_REFUSALS = new Set([
  "not_found",
  "method_not_allowed",
  "unsupported_media_type",
  "payload_too_large",
  "body_required",
  "invalid_json",
  "invalid_request",
  "invalid_phone",
  "invalid_token",
  "invalid_api_key",
  "unsupported_chain",
  "unknown_network"
])

// Path segments that attack routing and decoding: traversal, encoded slashes, NULs, odd Unicode.
const nastySegment = fc.oneof(
  fc.constantFrom(
    "..",
    "%2e%2e",
    "..%2F..%2Fetc%2Fpasswd",
    "%2F",
    "%00",
    "%",
    "%zz",
    "%C0%AF",
    "\u202e",
    "😀",
    "0x",
    ACCOUNT
  ),
  fc.string({ maxLength: 40 }).map(encodeURIComponent),
  fc.string({ unit: "grapheme", maxLength: 10 }).map(encodeURIComponent)
)
const path = fc.oneof(
  fc.constantFrom(
    "/functions/v1/signInWithOTP",
    "/functions/v1/verifyOTP",
    "/functions/v1/.well-known/jwks.json",
    "/v1/auth",
    "/v1/kernel/tx",
    "/v1/health",
    `/v1/anvil/account/${ACCOUNT}/payout/disperse`
  ),
  fc.tuple(nastySegment, nastySegment).map(([network, address]) => `/v1/${network}/account/${address}/payout/disperse`),
  fc
    .tuple(nastySegment, nastySegment, nastySegment)
    .map(([network, address, id]) => `/v1/${network}/account/${address}/payout/${id}`),
  nastySegment.map((id) => `/v1/kernel/tx/${id}`),
  fc.array(nastySegment, { maxLength: 6 }).map((segments) => `/${segments.join("/")}`)
)
const deep = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`
const body = fc.oneof(
  fc.json({ maxDepth: 4 }),
  fc
    .record({ phone: fc.anything(), token: fc.anything() })
    .map((value) => JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? String(v) : v))),
  fc
    .record({
      userId: fc.string(),
      chain: fc.string(),
      to: fc.anything(),
      value: fc.anything(),
      data: fc.anything(),
      auth: fc.anything()
    })
    .map((value) => JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? String(v) : v)) ?? "null"),
  fc.constantFrom(
    deep(5000),
    deep(100_000),
    `{"phone":"${"9".repeat(20_000)}"}`,
    '{"__proto__":{"admin":true},"phone":"+15005550006"}',
    "",
    "null",
    "\u0000"
  ),
  fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes).toString("latin1")),
  fc.string({ unit: "binary", maxLength: 200 })
)
const headers = fc.record(
  {
    "content-type": fc.constantFrom(
      "application/json",
      "application/json; charset=utf-8",
      "application/x-www-form-urlencoded",
      "text/plain",
      "APPLICATION/JSON",
      "multipart/form-data; boundary=x",
      ";;;"
    ),
    authorization: fc.oneof(
      fc.string({ maxLength: 100 }),
      fc.string({ maxLength: 100 }).map((token) => `Bearer ${token}`),
      fc.constant(`Basic ${"A".repeat(20_000)}`)
    ),
    "x-api-key": fc.oneof(fc.string({ maxLength: 80 }), fc.constant(API_KEY), fc.constant(`${API_KEY}, ${API_KEY}`)),
    "idempotency-key": fc.oneof(fc.string({ unit: "grapheme", maxLength: 300 }), fc.constant("k".repeat(10_000))),
    "x-request-id": fc.string({ maxLength: 200 }),
    "content-length": fc.oneof(fc.nat().map(String), fc.constantFrom("-1", "abc", "1e9", "99999999999999999999"))
  },
  { requiredKeys: [] }
)
const request = fc.record({
  method: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD", "get", "BREW"),
  path,
  headers,
  body: fc.option(body, { nil: undefined })
})

interface Attempt {
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string | undefined
}

const send = async (input: Attempt) => {
  const bytes = input.body === undefined ? undefined : new TextEncoder().encode(input.body)
  const gatewayRequest: GatewayRequest = {
    method: input.method,
    path: input.path,
    query: new URLSearchParams(),
    headers: input.headers,
    remoteAddress: "192.0.2.1",
    ...(bytes === undefined ? {} : { rawBody: await readBodyWithin([bytes], gateway.bodyLimit) })
  }
  return gateway.handle(gatewayRequest)
}

/** Every answer is JSON with a stable code when it is an error, and never a 5xx. */
const wellFormed = (path: string, response: GatewayResponse): void => {
  expect(response.status).toBeGreaterThanOrEqual(200)
  expect(response.status).toBeLessThan(500)
  expect(response.headers["x-request-id"]).toMatch(/^[A-Za-z0-9._:-]{1,128}$/)
  const body = JSON.parse(response.body) as Record<string, unknown>
  if (response.status < 400) return
  if (path === "/v1/auth" && response.headers["content-type"] === "application/json") {
    expect(OAUTH_ERRORS.has(String(body.error))).toBe(true)
    return
  }
  expect(response.headers["content-type"]).toBe("application/problem+json")
  expect(PROBLEM_CODES.has(String(body.code))).toBe(true)
  expect(body.status).toBe(response.status)
  expect(body.type).toBe(`urn:walletgate:problem:${String(body.code)}`)
}

describe("robustness: arbitrary requests to every endpoint", () => {
  it("never answer 5xx, always JSON with a stable code, and change nothing when refused for their form", async () => {
    await fc.assert(
      fc.asyncProperty(request, async (input) => {
        const before = counting.writes.length
        let response = await send(input)
        if (input.method.toUpperCase() === "HEAD") {
          // A HEAD answer is the GET's without its body (RFC 9110 §9.3.2): judge the GET's, and compare the two.
          expect(response.body).toBe("")
          const get = await send({ ...input, method: "GET" })
          expect([response.status, response.headers["content-type"]]).toEqual([get.status, get.headers["content-type"]])
          response = get
        }
        wellFormed(input.path, response)
        const code = String((JSON.parse(response.body) as { code?: unknown }).code)
        if (FORM_REFUSALS.has(code)) expect(counting.writes.slice(before)).toEqual([])
      }),
      { numRuns: 400 }
    )
  })

  it("hold for valid-looking bodies of the wrong types on each endpoint", async () => {
    const endpoints = [
      "/functions/v1/signInWithOTP",
      "/functions/v1/verifyOTP",
      "/v1/kernel/tx",
      `/v1/anvil/account/${ACCOUNT}/payout/disperse`
    ]
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...endpoints), fc.jsonValue(), async (path, value) => {
        const before = counting.writes.length
        const response = await send({
          method: "POST",
          path,
          headers: { "content-type": "application/json", "x-api-key": API_KEY },
          body: JSON.stringify(value)
        })
        wellFormed(path, response)
        const code = String((JSON.parse(response.body) as { code?: unknown }).code)
        if (FORM_REFUSALS.has(code)) expect(counting.writes.slice(before)).toEqual([])
      }),
      { numRuns: 300 }
    )
  })

  it("hold for near-valid sign-in bodies, where one field at a time goes wrong", async () => {
    const signIn = fc.record(
      {
        phone: fc.constantFrom<unknown>(
          "+15005550006",
          "+1 500 555 0006",
          "+14155552671",
          "+18765551234",
          "+1",
          // Names every object inherits: once taken for configured test phones, answered 500.
          "toString",
          "__proto__",
          "constructor",
          15005550006,
          null,
          ["+15005550006"]
        ),
        token: fc.constantFrom<unknown>("123456", "000000", "12345", "1234567", 123456, "12345a", "١٢٣٤٥٦", null)
      },
      { requiredKeys: [] }
    )
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("/functions/v1/signInWithOTP", "/functions/v1/verifyOTP"),
        signIn,
        async (path, value) => {
          const before = counting.writes.length
          const response = await send({
            method: "POST",
            path,
            headers: { "content-type": "application/json" },
            body: JSON.stringify(value)
          })
          wellFormed(path, response)
          const code = String((JSON.parse(response.body) as { code?: unknown }).code)
          if (FORM_REFUSALS.has(code)) expect(counting.writes.slice(before)).toEqual([])
        }
      ),
      { numRuns: 200 }
    )
  })

  it("still serve a well-formed request afterwards", async () => {
    const response = await send({
      method: "POST",
      path: "/functions/v1/signInWithOTP",
      headers: { "content-type": "application/json" },
      body: '{"phone":"+15005550006"}'
    })
    expect(response.status === 200 || response.status === 429).toBe(true)
  })
})
