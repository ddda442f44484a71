// Rows on how a request is read: unknown paths and methods, body framing and media type, JSON, schema failures, ids.
import { CONFORMANCE_BODY_LIMIT, testPhone } from "./gateway"
import { PROBLEM, post, problem, SIGN_IN, VERIFY } from "./requests"
import type { ConformanceCase } from "./types"

/** Rows on routing, body framing, media type, JSON and schema failures: the same on every route. */
export const requestCases: ReadonlyArray<ConformanceCase> = [
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
  }
]

/** Rows on the `x-request-id` every answer carries. */
export const requestIdCases: ReadonlyArray<ConformanceCase> = [
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
