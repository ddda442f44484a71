// The conformance table assembled: every row in its order, HEAD of every GET row, and the declared-length rows.
import { CONFORMANCE_BODY_LIMIT, CONFORMANCE_COOKIES, COOKIES_PATH } from "./gateway"
import { lookupCases } from "./lookupCases"
import { requestCases, requestIdCases } from "./requestCases"
import { JSON_TYPE, PROBLEM, post, problem, SIGN_IN, VERIFY } from "./requests"
import { signInCases } from "./signInCases"
import { transactionCases } from "./transactionCases"
import type { ConformanceCase } from "./types"

/**
 * The conformance table: every adapter, run against {@link makeConformanceGateway}, must answer each
 * request exactly so. A room's rows live in its own file here (`signInCases.ts`, `lookupCases.ts`, …).
 */
export const conformanceCases: ReadonlyArray<ConformanceCase> = [
  ...requestCases,
  ...signInCases,
  ...transactionCases,
  ...lookupCases,
  ...requestIdCases
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
