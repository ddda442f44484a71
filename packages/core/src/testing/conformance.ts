import { connect } from "node:net"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { hashClientSecret } from "../auth/AppAuth"
import { composeGateway } from "../compose"
import type { Gateway } from "../http/contract"
import { defineModule } from "../http/module"
import { routeWithoutBody } from "../http/route"
import { SmsSender } from "../otp/SmsSender"
import { hashApiKey } from "../payout/ApiKeys"
import { embeddedPorts, standardModules } from "../walletgate"

/** A request of the conformance table, as a client sends it over the wire. */
export interface ConformanceRequest {
  readonly method: string
  /** Path and query, below the mount point. */
  readonly path: string
  readonly headers?: Readonly<Record<string, string>>
  /** The raw body: text, or bytes for non-UTF-8 cases. */
  readonly body?: string | Uint8Array<ArrayBuffer>
}

/** A response as a target received it (header names lower-case). */
export interface ConformanceResponse {
  readonly status: number
  /** One string per name; a field the target received several times joined with `, `. */
  readonly headers: Readonly<Record<string, string | undefined>>
  /** Every `Set-Cookie` field received, each whole, in order (their values hold commas, so `headers` cannot). */
  readonly setCookie: ReadonlyArray<string>
  readonly body: string
}

/** One row of the table: the request, any requests that must precede it, and the exact answer expected. */
export interface ConformanceCase {
  readonly name: string
  /** Sent first, in order, each expected to succeed (2xx). */
  readonly before?: ReadonlyArray<ConformanceRequest>
  /** The request; a function builds it from the answers to `before` (e.g. to carry an access token). */
  readonly request: ConformanceRequest | ((before: ReadonlyArray<ConformanceResponse>) => ConformanceRequest)
  readonly expect: {
    readonly status: number
    /** The media type, without parameters; `""` for an answer without a body (204, 304), whose body must be empty. */
    readonly contentType: string
    /** Headers that must be present with exactly these values (or matching these patterns). */
    readonly headers?: Readonly<Record<string, string | RegExp>>
    /** The exact `Set-Cookie` fields, in order (none when absent: every answer is checked). */
    readonly setCookie?: ReadonlyArray<string>
    /** The answer must have no body although it has a content type (a `HEAD`). */
    readonly bodyless?: boolean
    /** The exact JSON body. */
    readonly body?: unknown
    /** For bodies with unpredictable parts (tokens): returns what is wrong, empty when all is right. */
    readonly check?: (body: unknown) => ReadonlyArray<string>
  }
}

/** The body limit of {@link makeConformanceGateway}: small, so the 413 case stays small. */
export const CONFORMANCE_BODY_LIMIT = 2048

const json = (value: unknown) => JSON.stringify(value)
const post = (path: string, body: unknown, headers: Record<string, string> = {}): ConformanceRequest => ({
  method: "POST",
  path,
  headers: { "content-type": "application/json", ...headers },
  body: typeof body === "string" ? body : json(body)
})
const SIGN_IN = "/functions/v1/signInWithOTP"
const VERIFY = "/functions/v1/verifyOTP"
const problem = (status: number, code: string, title: string, detail: string, extra: Record<string, unknown> = {}) => ({
  type: `urn:walletgate:problem:${code}`,
  title,
  status,
  detail,
  code,
  ...extra
})
/** Test phones of the conformance gateway: one per case that needs state, so cases never interfere. */
const testPhone = (n: number) => `+1500555${String(n).padStart(4, "0")}`
const TEST_CODE = "246810"

/** The API key registered in {@link makeConformanceGateway} (a test key; the gateway serves no network). */
export const CONFORMANCE_API_KEY = "wg_test_conformance_key_00000000000000000000000000000000"
const CONFORMANCE_ACCOUNT = "0x000000000000000000000000000000000000dEaD"

/** The app registered in {@link makeConformanceGateway}. */
export const CONFORMANCE_CLIENT = { clientId: "wgc_conformance", clientSecret: "wgs_conformance" } as const

const AUTH = "/v1/auth"
const KERNEL_TX = "/v1/kernel/tx"
const grant = post(AUTH, { client_id: CONFORMANCE_CLIENT.clientId, client_secret: CONFORMANCE_CLIENT.clientSecret })
/** A request carrying the access token that `grant` (the first `before` request) obtained. */
const withToken =
  (request: ConformanceRequest) =>
  (before: ReadonlyArray<ConformanceResponse>): ConformanceRequest => {
    const answer = before[0]
    const token =
      answer === undefined ? "" : String((JSON.parse(answer.body) as { access_token?: unknown }).access_token)
    return { ...request, headers: { ...request.headers, authorization: `Bearer ${token}` } }
  }
const SOME_ADDRESS = "0x52908400098527886E0F7030069857D2E4169EE7"
const INVALID_ADDRESS =
  "Give exactly one Ethereum address: 0x and 40 hex digits (mixed case must carry its EIP-55 checksum)."
const NOT_CONFIGURED_TITLE = "Dust-sweeping lookups not configured"
const NOT_CONFIGURED = "This gateway does not serve dust-sweeping lookups."
const someCall = { to: ["0x52908400098527886E0F7030069857D2E4169EE7"], value: ["0"], data: ["0x"], auth: "" }

/** The path of the conformance gateway's test route that sets two cookies. */
export const COOKIES_PATH = "/test/cookies"

/** The cookies that route sets: an `Expires` holds a comma, so joining or splitting them on commas breaks them. */
export const CONFORMANCE_COOKIES = [
  "session=abc; Expires=Wed, 21 Oct 2026 07:28:00 GMT; Path=/; HttpOnly; Secure",
  "theme=dark; Path=/"
] as const

/** A test module: `GET /test/cookies` answers 200 with two `Set-Cookie` fields. No production module sets one yet. */
const cookieModule = defineModule({
  name: "conformance-cookies",
  layer: Layer.empty,
  problems: {},
  routes: [
    routeWithoutBody("GET", COOKIES_PATH, () =>
      Effect.succeed({ status: 200, body: { cookies: 2 }, headers: { "set-cookie": CONFORMANCE_COOKIES } })
    )
  ]
})

/** Options of {@link makeConformanceGateway}. */
export interface ConformanceGatewayOptions {
  /** The gateway's own mount prefix (`"/wallet"`); the table's paths are below it. */
  readonly basePath?: string
}

/**
 * A gateway on the embedded defaults with the settings the table assumes: test phones
 * `+15005550001`… with code `246810`, a body limit of {@link CONFORMANCE_BODY_LIMIT}, and a test route that
 * sets two cookies ({@link COOKIES_PATH}).
 */
export const makeConformanceGateway = (options: ConformanceGatewayOptions = {}): Gateway =>
  composeGateway({
    modules: [...standardModules(), cookieModule],
    ...(options.basePath === undefined ? {} : { basePath: options.basePath }),
    ports: Layer.mergeAll(
      embeddedPorts({
        otp: { testPhones: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [testPhone(i + 1), TEST_CODE])) },
        apps: [
          {
            clientId: CONFORMANCE_CLIENT.clientId,
            secretHash: hashClientSecret(CONFORMANCE_CLIENT.clientSecret),
            providers: ["phone"],
            testMode: true
          }
        ],
        masterSecret: "conformance-master-secret-not-for-production",
        apiKeys: [
          {
            id: CONFORMANCE_API_KEY.slice(8, 20),
            mode: "test",
            hash: hashApiKey(CONFORMANCE_API_KEY),
            networks: ["anvil"],
            accounts: [CONFORMANCE_ACCOUNT.toLowerCase()],
            createdAt: 0
          }
        ]
      }),
      SmsSender.console(() => undefined)
    ),
    bodyLimit: CONFORMANCE_BODY_LIMIT,
    loggers: []
  })

const PROBLEM = "application/problem+json"
const JSON_TYPE = "application/json"

/**
 * The conformance table: every adapter, run against {@link makeConformanceGateway}, must answer each
 * request exactly so. Later endpoints add their rows here.
 */
export const conformanceCases: ReadonlyArray<ConformanceCase> = [
  {
    name: "unknown path is 404 not_found",
    request: { method: "GET", path: "/nope" },
    expect: { status: 404, contentType: PROBLEM, body: problem(404, "not_found", "Not found", "No such endpoint.") }
  },
  {
    name: "a trailing slash is another path",
    request: post(`${SIGN_IN}/`, { phone: testPhone(1) }),
    expect: { status: 404, contentType: PROBLEM, body: problem(404, "not_found", "Not found", "No such endpoint.") }
  },
  {
    name: "wrong method is 405 with Allow",
    request: { method: "GET", path: VERIFY },
    expect: {
      status: 405,
      contentType: PROBLEM,
      headers: { allow: "POST" },
      body: problem(405, "method_not_allowed", "Method not allowed", "This endpoint accepts POST.")
    }
  },
  {
    name: "a missing body is 400 body_required",
    request: { method: "POST", path: SIGN_IN, headers: { "content-type": "application/json" } },
    expect: {
      status: 400,
      contentType: PROBLEM,
      body: problem(400, "body_required", "Body required", "This endpoint needs a JSON body.")
    }
  },
  {
    name: "a body that is not JSON is 415",
    request: { method: "POST", path: SIGN_IN, headers: { "content-type": "text/plain" }, body: "phone=+1" },
    expect: {
      status: 415,
      contentType: PROBLEM,
      body: problem(415, "unsupported_media_type", "Unsupported media type", "Send the body as application/json.")
    }
  },
  {
    name: "malformed JSON is 400 invalid_json",
    request: post(SIGN_IN, '{"phone": "+1'),
    expect: {
      status: 400,
      contentType: PROBLEM,
      body: problem(400, "invalid_json", "Malformed JSON", "The body is not valid UTF-8 JSON.")
    }
  },
  {
    name: "a body that is not UTF-8 is 400 invalid_json",
    request: { ...post(SIGN_IN, ""), body: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) },
    expect: {
      status: 400,
      contentType: PROBLEM,
      body: problem(400, "invalid_json", "Malformed JSON", "The body is not valid UTF-8 JSON.")
    }
  },
  {
    name: "a JSON string with a byte that is not UTF-8 is 400 invalid_json",
    request: {
      ...post(SIGN_IN, ""),
      body: new Uint8Array([...new TextEncoder().encode('{"phone":"'), 0xff, ...new TextEncoder().encode('"}')])
    },
    expect: {
      status: 400,
      contentType: PROBLEM,
      body: problem(400, "invalid_json", "Malformed JSON", "The body is not valid UTF-8 JSON.")
    }
  },
  {
    name: "a body over the limit is 413",
    request: post(SIGN_IN, { phone: testPhone(1), padding: "x".repeat(CONFORMANCE_BODY_LIMIT) }),
    expect: {
      status: 413,
      contentType: PROBLEM,
      body: problem(
        413,
        "payload_too_large",
        "Payload too large",
        `The body may be at most ${CONFORMANCE_BODY_LIMIT} bytes.`
      )
    }
  },
  {
    name: "schema failures list every field",
    request: post(VERIFY, { token: 123456 }),
    expect: {
      status: 400,
      contentType: PROBLEM,
      body: problem(400, "invalid_request", "Invalid request", "2 fields are invalid.", {
        errors: [
          { path: "/phone", message: "Required" },
          { path: "/token", message: "Expected a string" }
        ]
      })
    }
  },
  {
    name: "a code that is not 6 digits is refused by the schema",
    request: post(VERIFY, { phone: testPhone(1), token: "12345" }),
    expect: {
      status: 400,
      contentType: PROBLEM,
      body: problem(400, "invalid_request", "Invalid request", "1 field is invalid.", {
        errors: [{ path: "/token", message: "Expected a string of 6 digits" }]
      })
    }
  },
  {
    name: "a JSON array is not the expected object",
    request: post(SIGN_IN, [1, 2]),
    expect: {
      status: 400,
      contentType: PROBLEM,
      body: problem(400, "invalid_request", "Invalid request", "1 field is invalid.", {
        errors: [{ path: "", message: "Expected an object" }]
      })
    }
  },
  {
    name: "a non-NANP number is 400 invalid_phone",
    request: post(SIGN_IN, { phone: "+44 20 7946 0958" }),
    expect: {
      status: 400,
      contentType: PROBLEM,
      body: problem(
        400,
        "invalid_phone",
        "Invalid phone number",
        "Use a US or Canadian number with the +1 prefix: expected +1 followed by 10 digits."
      )
    }
  },
  {
    name: "a Jamaican +1 number is 400 invalid_phone",
    request: post(SIGN_IN, { phone: "+1 876 555 1234" }),
    expect: {
      status: 400,
      contentType: PROBLEM,
      body: problem(
        400,
        "invalid_phone",
        "Invalid phone number",
        "Use a US or Canadian number with the +1 prefix: only numbers of the United States and Canada are accepted."
      )
    }
  },
  {
    name: "signInWithOTP answers sent, expiry and resend wait",
    request: post(SIGN_IN, { phone: testPhone(2) }, { "content-type": "application/json; charset=utf-8" }),
    expect: {
      status: 200,
      contentType: JSON_TYPE,
      headers: { "cache-control": "no-store", "x-content-type-options": "nosniff" },
      body: { sent: true, expires_in: 300, resend_after: 60 }
    }
  },
  {
    name: "a resend within the interval is 429 with Retry-After",
    before: [post(SIGN_IN, { phone: testPhone(3) })],
    request: post(SIGN_IN, { phone: testPhone(3) }),
    expect: {
      status: 429,
      contentType: PROBLEM,
      headers: { "retry-after": /^(59|60)$/ },
      check: (body) => {
        const code = (body as { code?: unknown }).code
        return code === "rate_limited" ? [] : [`code is ${String(code)}`]
      }
    }
  },
  {
    name: "a wrong code is 401 otp_invalid",
    before: [post(SIGN_IN, { phone: testPhone(4) })],
    request: post(VERIFY, { phone: testPhone(4), token: "000000" }),
    expect: {
      status: 401,
      contentType: PROBLEM,
      body: problem(
        401,
        "otp_invalid",
        "Invalid code",
        "The code is wrong, expired or already used. Request a new one."
      )
    }
  },
  {
    name: "a code never requested is 401 otp_invalid",
    request: post(VERIFY, { phone: testPhone(5), token: TEST_CODE }),
    expect: {
      status: 401,
      contentType: PROBLEM,
      body: problem(
        401,
        "otp_invalid",
        "Invalid code",
        "The code is wrong, expired or already used. Request a new one."
      )
    }
  },
  {
    name: "verifyOTP exchanges the code for a bearer JWT and the user",
    before: [post(SIGN_IN, { phone: testPhone(6) })],
    request: post(VERIFY, { phone: testPhone(6), token: TEST_CODE }),
    expect: {
      status: 200,
      contentType: JSON_TYPE,
      headers: { "cache-control": "no-store" },
      check: (body) => {
        const b = body as Record<string, unknown>
        const user = b.user as Record<string, unknown> | undefined
        const problems: Array<string> = []
        if (typeof b.access_token !== "string" || b.access_token.split(".").length !== 3) problems.push("access_token")
        if (b.token_type !== "bearer") problems.push("token_type")
        if (b.expires_in !== 3600) problems.push("expires_in")
        if (typeof b.expires_at !== "number") problems.push("expires_at")
        if (user?.phone !== testPhone(6)) problems.push("user.phone")
        if (typeof user?.id !== "string" || !/^[0-9a-f-]{36}$/.test(user.id)) problems.push("user.id")
        return problems
      }
    }
  },
  {
    name: "the JWKS publishes the signing key",
    request: { method: "GET", path: "/functions/v1/.well-known/jwks.json" },
    expect: {
      status: 200,
      contentType: JSON_TYPE,
      headers: { "cache-control": "public, max-age=300" },
      check: (body) => {
        const keys = (body as { keys?: Array<Record<string, unknown>> }).keys
        const key = keys?.[0]
        return keys?.length === 1 && key?.alg === "EdDSA" && typeof key.kid === "string" && key.d === undefined
          ? []
          : ["keys"]
      }
    }
  },
  {
    name: "POST /v1/auth grants an access token for JSON client credentials",
    request: grant,
    expect: {
      status: 200,
      contentType: JSON_TYPE,
      headers: { "cache-control": "no-store", pragma: "no-cache" },
      check: (body) => {
        const b = body as Record<string, unknown>
        return typeof b.access_token === "string" && b.token_type === "bearer" && b.expires_in === 3600 ? [] : ["token"]
      }
    }
  },
  {
    name: "POST /v1/auth answers a wrong secret in the RFC 6749 shape",
    request: post(AUTH, { client_id: CONFORMANCE_CLIENT.clientId, client_secret: "wrong" }),
    expect: {
      status: 401,
      contentType: JSON_TYPE,
      body: { error: "invalid_client", error_description: "Client authentication failed." }
    }
  },
  {
    name: "POST /v1/auth refuses other grant types",
    request: {
      method: "POST",
      path: AUTH,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=password&username=a&password=b"
    },
    expect: {
      status: 400,
      contentType: JSON_TYPE,
      body: { error: "unsupported_grant_type", error_description: "Only client_credentials is supported." }
    }
  },
  {
    name: "kernel tx without an access token is 401 invalid_token",
    request: post(KERNEL_TX, { userId: "phone:x", chain: "anvil", ...someCall }),
    expect: {
      status: 401,
      contentType: PROBLEM,
      headers: { "www-authenticate": 'Bearer error="invalid_token"' },
      body: problem(401, "invalid_token", "Invalid token", "The token is invalid or expired.")
    }
  },
  {
    name: "kernel tx on a chain the gateway does not serve is 400 unsupported_chain",
    before: [grant],
    request: withToken(post(KERNEL_TX, { userId: "phone:x", chain: "mainnet", ...someCall })),
    expect: {
      status: 400,
      contentType: PROBLEM,
      body: problem(400, "unsupported_chain", "Unsupported chain", 'This gateway does not serve the chain "mainnet".')
    }
  },
  {
    name: "kernel tx names each invalid field and index",
    before: [grant],
    request: withToken(
      post(KERNEL_TX, { userId: "x", chain: "anvil", to: ["0x12"], value: ["01"], data: ["0xabc"], auth: "" })
    ),
    expect: {
      status: 400,
      contentType: PROBLEM,
      body: problem(400, "invalid_request", "Invalid request", "4 fields are invalid.", {
        errors: [
          { path: "/userId", message: "Expected <provider>:<user_id>, e.g. phone:5c0f…" },
          { path: "/to/0", message: "Expected an address (mixed case must carry a valid EIP-55 checksum)" },
          { path: "/value/0", message: "Expected a decimal string in uint256 range" },
          { path: "/data/0", message: "Expected an even number of hex digits" }
        ]
      })
    }
  },
  {
    name: "an unknown kernel transaction is 404 tx_not_found",
    before: [grant],
    request: withToken({ method: "GET", path: `${KERNEL_TX}/00000000-0000-4000-8000-000000000000` }),
    expect: {
      status: 404,
      contentType: PROBLEM,
      body: problem(404, "tx_not_found", "Transaction not found", "No such transaction.")
    }
  },
  {
    name: "a payout without X-API-KEY is 401 invalid_api_key",
    request: post(`/v1/anvil/account/${CONFORMANCE_ACCOUNT}/payout/disperse`, {}),
    expect: {
      status: 401,
      contentType: PROBLEM,
      body: problem(401, "invalid_api_key", "Invalid API key", "Send a valid, unrevoked key in the X-API-KEY header.")
    }
  },
  {
    name: "a payout with an unknown key is 401 invalid_api_key",
    request: post(
      `/v1/anvil/account/${CONFORMANCE_ACCOUNT}/payout/disperse`,
      {},
      { "x-api-key": `${CONFORMANCE_API_KEY}x` }
    ),
    expect: {
      status: 401,
      contentType: PROBLEM,
      body: problem(401, "invalid_api_key", "Invalid API key", "Send a valid, unrevoked key in the X-API-KEY header.")
    }
  },
  {
    name: "a payout on a network the gateway does not serve is 404 unknown_network",
    request: post(`/v1/anvil/account/${CONFORMANCE_ACCOUNT}/payout/disperse`, {}, { "x-api-key": CONFORMANCE_API_KEY }),
    expect: {
      status: 404,
      contentType: PROBLEM,
      body: problem(404, "unknown_network", "Unknown network", 'This gateway does not serve the network "anvil".')
    }
  },
  {
    name: "a payout path whose address is not an address is 400 invalid_request",
    request: post("/v1/anvil/account/0xNOT-AN-ADDRESS/payout/disperse", {}, { "x-api-key": CONFORMANCE_API_KEY }),
    expect: {
      status: 400,
      contentType: PROBLEM,
      body: problem(400, "invalid_request", "Invalid request", "1 field is invalid.", {
        errors: [{ path: "/address", message: "Expected an address (mixed case must carry a valid EIP-55 checksum)" }]
      })
    }
  },
  {
    name: "the health check lists each network's pipeline",
    request: { method: "GET", path: "/v1/health" },
    expect: { status: 200, contentType: JSON_TYPE, body: { status: "ok", networks: [] } }
  },
  {
    name: "a lookup of something that is not an address is 400 invalid_address, readable cross-origin",
    request: { method: "GET", path: "/api/0x123", headers: { origin: "https://app.example" } },
    expect: {
      status: 400,
      contentType: PROBLEM,
      headers: { "access-control-allow-origin": "*", "cache-control": "no-store" },
      body: problem(400, "invalid_address", "Invalid address", INVALID_ADDRESS)
    }
  },
  {
    name: "a lookup of two addresses is 400 invalid_address",
    request: { method: "GET", path: `/api/${SOME_ADDRESS},${CONFORMANCE_ACCOUNT}` },
    expect: {
      status: 400,
      contentType: PROBLEM,
      body: problem(400, "invalid_address", "Invalid address", INVALID_ADDRESS)
    }
  },
  {
    name: "a lookup of a mixed-case address with a wrong checksum is 400 invalid_address",
    request: { method: "GET", path: `/api/${SOME_ADDRESS.replace("E0F", "e0F")}` },
    expect: {
      status: 400,
      contentType: PROBLEM,
      body: problem(400, "invalid_address", "Invalid address", INVALID_ADDRESS)
    }
  },
  {
    name: "a lookup on a gateway without sweeper settings is 404 sweeper_not_configured",
    request: { method: "GET", path: `/api/${SOME_ADDRESS.toLowerCase()}` },
    expect: {
      status: 404,
      contentType: PROBLEM,
      headers: { "access-control-allow-origin": "*" },
      body: problem(404, "sweeper_not_configured", NOT_CONFIGURED_TITLE, NOT_CONFIGURED)
    }
  },
  {
    name: "/api/orders is its own endpoint, not an address",
    request: { method: "GET", path: "/api/orders" },
    expect: {
      status: 404,
      contentType: PROBLEM,
      body: problem(404, "sweeper_not_configured", NOT_CONFIGURED_TITLE, NOT_CONFIGURED)
    }
  },
  {
    name: "/api/all-orders is its own endpoint, not an address",
    request: { method: "GET", path: "/api/all-orders" },
    expect: {
      status: 404,
      contentType: PROBLEM,
      body: problem(404, "sweeper_not_configured", NOT_CONFIGURED_TITLE, NOT_CONFIGURED)
    }
  },
  {
    name: "a CORS preflight of a lookup is 204 without a body",
    request: {
      method: "OPTIONS",
      path: `/api/${SOME_ADDRESS}`,
      headers: { origin: "https://app.example", "access-control-request-method": "GET" }
    },
    expect: {
      status: 204,
      contentType: "",
      headers: {
        "access-control-allow-origin": "*",
        "access-control-allow-methods": "GET, OPTIONS",
        "access-control-max-age": "600"
      }
    }
  },
  {
    name: "a lookup by POST is 405 allowing GET, HEAD and OPTIONS",
    request: post("/api/orders", {}),
    expect: {
      status: 405,
      contentType: PROBLEM,
      headers: { allow: "GET, HEAD, OPTIONS" },
      body: problem(405, "method_not_allowed", "Method not allowed", "This endpoint accepts GET, HEAD, OPTIONS.")
    }
  },
  {
    name: "a sane x-request-id is echoed",
    request: { method: "GET", path: "/nope", headers: { "x-request-id": "req-42.abc" } },
    expect: { status: 404, contentType: PROBLEM, headers: { "x-request-id": "req-42.abc" } }
  },
  {
    name: "an unsafe x-request-id is replaced",
    request: { method: "GET", path: "/nope", headers: { "x-request-id": "<script>" } },
    expect: { status: 404, contentType: PROBLEM, headers: { "x-request-id": /^[0-9a-f-]{36}$/ } }
  }
]

/** The GET cases of the table asked as HEAD: the same status and headers, no body (RFC 9110 §9.3.2). */
const headCases: ReadonlyArray<ConformanceCase> = conformanceCases.flatMap((testCase) => {
  if (typeof testCase.request === "function" || testCase.request.method !== "GET") return []
  const { body: _body, check: _check, ...expect } = testCase.expect
  return [
    {
      ...testCase,
      name: `HEAD: ${testCase.name}`,
      request: { ...testCase.request, method: "HEAD" },
      expect: { ...expect, bodyless: true }
    }
  ]
})

/** Answers with several values of one field, and HEAD on every GET route. */
export const httpDetailCases: ReadonlyArray<ConformanceCase> = [
  {
    name: "two Set-Cookie fields arrive whole and apart",
    request: { method: "GET", path: COOKIES_PATH },
    expect: { status: 200, contentType: JSON_TYPE, setCookie: CONFORMANCE_COOKIES, body: { cookies: 2 } }
  },
  {
    name: "HEAD of a route that sets two cookies sets them too",
    request: { method: "HEAD", path: COOKIES_PATH },
    expect: { status: 200, contentType: JSON_TYPE, setCookie: CONFORMANCE_COOKIES, bodyless: true }
  },
  {
    name: "a POST-only path answers HEAD with 405 and its Allow",
    request: { method: "HEAD", path: VERIFY },
    expect: { status: 405, contentType: PROBLEM, headers: { allow: "POST" }, bodyless: true }
  },
  {
    name: "GET on a GET route that also answers HEAD lists both in Allow when refused",
    request: post("/v1/health", {}),
    expect: {
      status: 405,
      contentType: PROBLEM,
      headers: { allow: "GET, HEAD" },
      body: problem(405, "method_not_allowed", "Method not allowed", "This endpoint accepts GET, HEAD.")
    }
  },
  ...headCases
]

/** Every case an adapter must pass: {@link conformanceCases} and {@link httpDetailCases}. */
export const allConformanceCases: ReadonlyArray<ConformanceCase> = [...conformanceCases, ...httpDetailCases]

/** The `Content-Length` the cases of {@link declaredLengthCases} declare: about 100 GB, of which 2 bytes are sent. */
export const DECLARED_OVERSIZE = "99999999999"

const TOO_LARGE = problem(
  413,
  "payload_too_large",
  "Payload too large",
  `The body may be at most ${CONFORMANCE_BODY_LIMIT} bytes.`
)

/**
 * Requests that declare a body far larger than the limit and send 2 bytes of it. `fetch` cannot send them (it frames
 * the body itself); {@link sendOverSocket} can. Each must be refused at once with 413, before the body is read: a
 * server that reads first waits for bytes that never come. The answer closes the connection (`Connection: close`): the
 * rest of the declared body would otherwise stand where the next request on it should.
 */
export const declaredLengthCases: ReadonlyArray<ConformanceCase> = [
  {
    name: "a body declared larger than the limit is 413 before it is read",
    request: {
      ...post(SIGN_IN, "{}"),
      headers: { "content-type": "application/json", "content-length": DECLARED_OVERSIZE }
    },
    expect: { status: 413, contentType: PROBLEM, headers: { connection: "close" }, body: TOO_LARGE }
  },
  {
    name: "a GET declaring a body larger than the limit is 413 too",
    request: {
      method: "GET",
      path: "/functions/v1/.well-known/jwks.json",
      headers: { "content-length": DECLARED_OVERSIZE },
      body: "{}"
    },
    expect: { status: 413, contentType: PROBLEM, headers: { connection: "close" }, body: TOO_LARGE }
  }
]

const canonical = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonical)
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, inner]) => [key, canonical(inner)])
    )
  }
  return value
}

/** Compares a response with a case's expectation; returns every difference (empty when it conforms). */
export const checkConformance = (testCase: ConformanceCase, response: ConformanceResponse): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const { expect } = testCase
  if (response.status !== expect.status) problems.push(`status ${response.status}, expected ${expect.status}`)
  const media = (response.headers["content-type"] ?? "").split(";")[0]?.trim()
  if (media !== expect.contentType) problems.push(`content-type ${media}, expected ${expect.contentType}`)
  if (response.headers["x-request-id"] === undefined) problems.push("no x-request-id")
  if (response.headers["x-content-type-options"] !== "nosniff") problems.push("no x-content-type-options: nosniff")
  for (const [name, wanted] of Object.entries(expect.headers ?? {})) {
    const actual = response.headers[name]
    const ok = typeof wanted === "string" ? actual === wanted : actual !== undefined && wanted.test(actual)
    if (!ok) problems.push(`header ${name}: ${actual}, expected ${String(wanted)}`)
  }
  const cookies = expect.setCookie ?? []
  if (JSON.stringify(response.setCookie) !== JSON.stringify(cookies)) {
    problems.push(`set-cookie ${JSON.stringify(response.setCookie)}, expected ${JSON.stringify(cookies)}`)
  }
  if (expect.contentType === "" || expect.bodyless === true) {
    if (response.body !== "") problems.push(`body ${response.body}, expected none`)
    return problems
  }
  let body: unknown
  try {
    body = JSON.parse(response.body)
  } catch {
    problems.push("body is not JSON")
    return problems
  }
  if (expect.body !== undefined && JSON.stringify(canonical(body)) !== JSON.stringify(canonical(expect.body))) {
    problems.push(`body ${response.body}, expected ${JSON.stringify(expect.body)}`)
  }
  if (expect.check !== undefined) problems.push(...expect.check(body).map((p) => `body: ${p}`))
  return problems
}

/**
 * Runs the whole table (or `cases`) through `send` (one target: an adapter on a real server, a Lambda handler, …)
 * and returns the differences per case name. A target conforms when every list is empty.
 */
export const runConformance = async (
  send: (request: ConformanceRequest) => Promise<ConformanceResponse>,
  cases: ReadonlyArray<ConformanceCase> = allConformanceCases
): Promise<Record<string, ReadonlyArray<string>>> => {
  const results: Record<string, ReadonlyArray<string>> = {}
  for (const testCase of cases) {
    const setup: Array<string> = []
    const answers: Array<ConformanceResponse> = []
    for (const request of testCase.before ?? []) {
      const response = await send(request)
      answers.push(response)
      if (response.status < 200 || response.status > 299)
        setup.push(`setup ${request.path} answered ${response.status}`)
    }
    const request = typeof testCase.request === "function" ? testCase.request(answers) : testCase.request
    results[testCase.name] = [...setup, ...checkConformance(testCase, await send(request))]
  }
  return results
}

/** Sends a conformance request to an HTTP server with `fetch` and collects the response. */
export const sendOverHttp =
  (baseUrl: string) =>
  async (request: ConformanceRequest): Promise<ConformanceResponse> => {
    const response = await fetch(`${baseUrl}${request.path}`, {
      method: request.method,
      headers: request.headers ?? {},
      ...(request.body === undefined ? {} : { body: request.body })
    })
    return responseOfFetch(response)
  }

/** A web-standard `Response` as a conformance response (`Set-Cookie` fields kept apart, as `fetch` keeps them). */
export const responseOfFetch = async (response: Response): Promise<ConformanceResponse> => {
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value
  })
  return { status: response.status, headers, setCookie: response.headers.getSetCookie(), body: await response.text() }
}

/**
 * Sends a conformance request on a new TCP connection, its head exactly as given (a `Content-Length` the body does
 * not have is sent as it is; one is added only when none is given), and collects the answer once the server has
 * closed the connection: a server that keeps it open never answers here. The answer carries `connection`.
 */
export const sendOverSocket =
  (baseUrl: string) =>
  (request: ConformanceRequest): Promise<ConformanceResponse> => {
    const url = new URL(`${baseUrl}${request.path}`)
    const body = typeof request.body === "string" ? new TextEncoder().encode(request.body) : request.body
    const headers: Record<string, string> = { host: url.host, ...request.headers }
    const named = (name: string) => Object.keys(headers).some((key) => key.toLowerCase() === name)
    if (body !== undefined && !named("content-length")) headers["content-length"] = String(body.byteLength)
    const head = [
      `${request.method} ${url.pathname}${url.search} HTTP/1.1`,
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)
    ].join("\r\n")
    return new Promise((resolve, reject) => {
      const chunks: Array<Buffer> = []
      const socket = connect(Number(url.port), url.hostname, () => {
        socket.write(`${head}\r\n\r\n`)
        if (body !== undefined) socket.write(body)
      })
      socket.on("data", (chunk: Buffer) => chunks.push(chunk))
      socket.on("error", reject)
      socket.on("close", () => {
        const answer = parseAnswer(Buffer.concat(chunks).toString("utf8"))
        if (answer === undefined) reject(new Error("the server closed the connection without an answer"))
        else resolve(answer)
      })
    })
  }

/** An HTTP/1.1 answer with a `Content-Length` (or ended by the connection's close), as read from a socket. */
const parseAnswer = (raw: string): ConformanceResponse | undefined => {
  const end = raw.indexOf("\r\n\r\n")
  if (end === -1) return undefined
  const [statusLine = "", ...lines] = raw.slice(0, end).split("\r\n")
  const status = Number(statusLine.split(" ")[1])
  if (!Number.isInteger(status)) return undefined
  const headers: Record<string, string> = {}
  const setCookie: Array<string> = []
  for (const line of lines) {
    const colon = line.indexOf(":")
    if (colon <= 0) continue
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    if (name === "set-cookie") setCookie.push(value)
    else headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`
  }
  const rest = raw.slice(end + 4)
  const length = headers["content-length"]
  return { status, headers, setCookie, body: length === undefined ? rest : rest.slice(0, Number(length)) }
}

/** What {@link refusedBodyThenNext} saw: the refused request's answer, and the next request's status. */
export interface RefusedBodyOutcome {
  readonly refused: { readonly status: number; readonly connection: string | undefined }
  readonly next: number
}

/**
 * Sends a body of `bytes` (over the limit) to `${baseUrl}${path}` on a keep-alive `node:http` agent of one
 * socket, with its `Content-Length` declared or chunked, then a GET of `${baseUrl}${nextPath}` on the same agent:
 * a server that leaves the refused body unread on a connection it keeps would reset the next request
 * (`ECONNRESET`). Rejects when either request fails on the wire.
 */
export const refusedBodyThenNext = async (
  baseUrl: string,
  options: {
    readonly path: string
    readonly nextPath: string
    readonly bytes: number
    readonly framing: "declared" | "chunked"
  }
): Promise<RefusedBodyOutcome> => {
  const { Agent, request } = await import("node:http")
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const send = (method: string, path: string, body?: Uint8Array) =>
    new Promise<{ readonly status: number; readonly connection: string | undefined }>((resolve, reject) => {
      const url = new URL(`${baseUrl}${path}`)
      const headers: Record<string, string> = { "content-type": "application/json" }
      if (body !== undefined) {
        if (options.framing === "declared") headers["content-length"] = String(body.byteLength)
        else headers["transfer-encoding"] = "chunked"
      }
      const sent = request(
        { host: url.hostname, port: url.port, method, path: `${url.pathname}${url.search}`, agent, headers },
        (response) => {
          response.resume()
          response.on("error", reject)
          response.on("end", () =>
            resolve({ status: response.statusCode ?? 0, connection: response.headers.connection })
          )
        }
      )
      sent.on("error", reject)
      if (body === undefined) sent.end()
      else {
        // Chunked: the body in pieces, as a client streaming an upload sends it.
        for (let at = 0; at < body.byteLength; at += 65_536) sent.write(body.subarray(at, at + 65_536))
        sent.end()
      }
    })
  try {
    const refused = await send("POST", options.path, new Uint8Array(options.bytes).fill(0x61))
    const next = await send("GET", options.nextPath)
    return { refused, next: next.status }
  } finally {
    agent.destroy()
  }
}
