// What bench/http.ts sends, the same bytes to walletgate's server and to the bare one.

/** The frameworks compared, each with walletgate's adapter and with a bare app. */
export const frameworks = ["Express 5", "Koa 3", "node:http"] as const

/** One of {@link frameworks}. */
export type Framework = (typeof frameworks)[number]

/** An answer, as the bare servers write it (walletgate's answers have this shape too). */
export interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** Phone sign-in: 200 for a test phone (no SMS sent). */
export const SIGN_IN_PATH = "/functions/v1/signInWithOTP"
/** Phone sign-in's second step: the code for a session (a user JWT). */
export const VERIFY_PATH = "/functions/v1/verifyOTP"
/** The code every test phone takes. */
export const TEST_CODE = "123456"
/** Test phone `n`: +1 415 200-0000, +1 415 200-0001, …, all the same length, so every body has the same size. */
export const testPhone = (n: number): string => `+1415${2_000_000 + n}`

/** A request that runs a domain effect for a fresh phone: its path and its body for the phone and its code. */
export interface PhoneRequest {
  readonly path: string
  readonly body: (phone: string, code: string) => string
}

/** One kind of request, with the status every server must answer. */
export interface RequestKind {
  readonly name: string
  readonly method: "GET" | "POST" | "OPTIONS"
  readonly path: string
  readonly headers?: Readonly<Record<string, string>>
  /** The body, for the requests that run a domain effect: each for a fresh phone. */
  readonly body?: PhoneRequest["body"]
  /** The sign-in sends the phone its code first, outside the measure (the server tells the code it sent). */
  readonly afterSend?: true
  /** The same request to the peer (better-auth's phone-number plugin), where it has one. */
  readonly peer?: PhoneRequest
  readonly status: number
}

/** The request kinds measured: those that run no domain effect, then the sign-in's two steps, which do. */
export const requestKinds: ReadonlyArray<RequestKind> = [
  { name: "GET unknown path (404)", method: "GET", path: "/v1/no-such-endpoint", status: 404 },
  { name: "GET on a POST route (405)", method: "GET", path: SIGN_IN_PATH, status: 405 },
  {
    name: "OPTIONS preflight",
    method: "OPTIONS",
    path: "/api/all-orders",
    headers: { origin: "https://app.example", "access-control-request-method": "GET" },
    status: 204
  },
  { name: "GET JWKS", method: "GET", path: "/functions/v1/.well-known/jwks.json", status: 200 },
  { name: "GET health", method: "GET", path: "/v1/health", status: 200 },
  { name: "GET OpenAPI", method: "GET", path: "/openapi.json", status: 200 },
  {
    name: "POST signInWithOTP",
    method: "POST",
    path: SIGN_IN_PATH,
    body: (phone) => `{"phone":"${phone}"}`,
    peer: { path: "/api/auth/phone-number/send-otp", body: (phone) => `{"phoneNumber":"${phone}"}` },
    status: 200
  },
  {
    name: "POST verifyOTP",
    method: "POST",
    path: VERIFY_PATH,
    body: (phone, code) => `{"phone":"${phone}","token":"${code}"}`,
    afterSend: true,
    peer: {
      path: "/api/auth/phone-number/verify",
      body: (phone, code) => `{"phoneNumber":"${phone}","code":"${code}"}`
    },
    status: 200
  }
]
