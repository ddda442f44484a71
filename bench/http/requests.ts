// The requests bench/http.ts sends, the same bytes to every server it compares.

/** Phone sign-in: answered 200 `{"sent":true,…}` for a test phone (no SMS). */
export const SIGN_IN_PATH = "/functions/v1/signInWithOTP"
/** The JWKS that verifies user tokens: answered 200 with one Ed25519 key. */
export const JWKS_PATH = "/functions/v1/.well-known/jwks.json"
/** A path no route serves: answered 404 problem+json. */
export const MISSING_PATH = "/v1/no-such-endpoint"

/** The code every test phone takes. */
export const TEST_CODE = "123456"
/**
 * How many test phones a server knows. A phone can be sent a code once a minute, so every sign-in of a
 * server's life goes to another phone; a server lives for one run (warm-up and measurement of each request).
 */
export const TEST_PHONES = Number(process.env.TEST_PHONES ?? 200_000)

/** Test phone `n`: +1 415 200-0000, +1 415 200-0001, …; all the same length, so every body has the same size. */
export const testPhone = (n: number): string => `+1415${2_000_000 + n}`

/** The body of a sign-in for test phone `n`. */
export const signInBody = (n: number): string => `{"phone":"${testPhone(n)}"}`

/** The configuration of test phones that walletgate's servers run with. */
export const testPhones = (): Record<string, string> => {
  const phones: Record<string, string> = {}
  for (let n = 0; n < TEST_PHONES; n++) phones[testPhone(n)] = TEST_CODE
  return phones
}

/** The answers a bare server gives byte for byte as walletgate does: taken from a walletgate gateway. */
export interface Reference {
  /** The JWKS document (another key than each walletgate server's own, of the same size). */
  readonly jwks: unknown
  /** The problem document of an unknown path. */
  readonly notFound: unknown
}

/** One request measured, with the status every server must answer it with. */
export interface MeasuredRequest {
  readonly name: string
  readonly method: "GET" | "POST"
  readonly path: string
  /** The body of the `n`th request, for requests that carry one. */
  readonly body?: (n: number) => string
  readonly status: number
}

/** What is measured on every server, in this order. */
export const measuredRequests: ReadonlyArray<MeasuredRequest> = [
  { name: "GET unknown path (404)", method: "GET", path: MISSING_PATH, status: 404 },
  { name: "GET JWKS", method: "GET", path: JWKS_PATH, status: 200 },
  { name: "POST signInWithOTP (test phone)", method: "POST", path: SIGN_IN_PATH, body: signInBody, status: 200 }
]
