// Builders the rows of the table share: a JSON POST, an RFC 9457 problem, the paths, a request with a token.
import { CONFORMANCE_CLIENT } from "./gateway"
import type { ConformanceRequest, ConformanceResponse } from "./types"

const json = (value: unknown) => JSON.stringify(value)
/** A POST of `body` (JSON unless already a string) with a JSON content type. */
export const post = (path: string, body: unknown, headers: Record<string, string> = {}): ConformanceRequest => ({
  method: "POST",
  path,
  headers: { "content-type": "application/json", ...headers },
  body: typeof body === "string" ? body : json(body)
})
/** The sign-in paths. */
export const SIGN_IN = "/functions/v1/signInWithOTP"
/** The code-exchange path. */
export const VERIFY = "/functions/v1/verifyOTP"
/** An RFC 9457 problem document as the gateway writes it. */
export const problem = (
  status: number,
  code: string,
  title: string,
  detail: string,
  extra: Record<string, unknown> = {}
) => ({
  type: `urn:walletgate:problem:${code}`,
  title,
  status,
  detail,
  code,
  ...extra
})

/** The client-credentials path. */
export const AUTH = "/v1/auth"
/** The kernel transaction path. */
export const KERNEL_TX = "/v1/kernel/tx"
/** A client-credentials grant for the conformance app. */
export const grant = post(AUTH, {
  client_id: CONFORMANCE_CLIENT.clientId,
  client_secret: CONFORMANCE_CLIENT.clientSecret
})
/** A request carrying the access token that `grant` (the first `before` request) obtained. */
export const withToken =
  (request: ConformanceRequest) =>
  (before: ReadonlyArray<ConformanceResponse>): ConformanceRequest => {
    const answer = before[0]
    const token =
      answer === undefined ? "" : String((JSON.parse(answer.body) as { access_token?: unknown }).access_token)
    return { ...request, headers: { ...request.headers, authorization: `Bearer ${token}` } }
  }

/** The media type of a problem answer. */
export const PROBLEM = "application/problem+json"
/** The media type of a JSON answer. */
export const JSON_TYPE = "application/json"
