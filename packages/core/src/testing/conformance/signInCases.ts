// Rows of phone sign-in (OTP, JWT, JWKS) and of the apps' client-credentials grant.
import { CONFORMANCE_CLIENT, TEST_CODE, testPhone } from "./gateway"
import { AUTH, grant, JSON_TYPE, PROBLEM, post, problem, SIGN_IN, VERIFY } from "./requests"
import type { ConformanceCase } from "./types"

/** Rows of phone sign-in and of `POST /v1/auth`. */
export const signInCases: ReadonlyArray<ConformanceCase> = [
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
  }
]
