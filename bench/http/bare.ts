// What a hand-written server does for the measured requests, shared by the bare Express, Koa and node:http
// servers so that the three do exactly the same work and differ only in their framework.
//
// "Equivalent work" means: the same answer (status, the same four headers, the same JSON body bytes; the
// x-request-id the client's own or a fresh random one) from the same checks walletgate makes on these requests,
// written the cheap way a careful developer would write them by hand:
// - every request: routing by method and path, the client's x-request-id echoed when it is a sane value (as
//   walletgate does), else a fresh UUID; the body serialised per request (walletgate serialises per request too);
// - POST signInWithOTP: the media type must be application/json, the body is read within 100 KiB (with
//   walletgate's own readers, `readBodyWithin` from a Node stream and `readRequestBody` from a fetch `Request`, so
//   that both sides read it alike), decoded as strict UTF-8 and JSON.parse'd (as walletgate reads a body no host
//   parser took); the phone must be a string of at most 32 characters that, once spaces, dashes, dots and
//   brackets are removed, is one of the test phones walletgate's servers are configured with, looked up in a Map
//   of the same table (as walletgate looks it up in its configuration; no libphonenumber either side), so that
//   both sides hold the bench's table, a phone per sign-in of a run, in their heaps.
// Bare answers the measured requests only; a failed check gets a plain JSON error (never exercised).
//
// Optionally (`withState`) the sign-in also does the state work walletgate's in-memory ports do for a test
// phone: an HMAC-SHA256 of phone and code, the code record with its resend interval in a Map, and the
// per-phone and per-IP hourly counters in a Map. That is the same job, not framework overhead, so it is a
// separate target ("bare + state"): it shows how much of the gap is walletgate's own work rather than cost.
import { createHmac, randomBytes, randomUUID } from "node:crypto"
import { JWKS_PATH, type Reference, SIGN_IN_PATH, testPhones } from "./requests.ts"

/** One answer of a bare server. */
export interface BareAnswer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** The bare logic, framework aside: each framework maps its request to these calls and writes the answer. */
export interface BareServer {
  /** The answer to anything but the sign-in; `offeredId` is the request's `x-request-id` header. */
  readonly answer: (method: string, path: string, offeredId: string | undefined) => BareAnswer
  /** Whether this request is the sign-in, whose body {@link signIn} reads. */
  readonly isSignIn: (method: string, path: string) => boolean
  /** The sign-in; `readBody` reads the request's body within {@link BARE_BODY_LIMIT}, as the framework's walletgate does. */
  readonly signIn: (
    contentType: string | undefined,
    readBody: () => Promise<Uint8Array | undefined>,
    clientIp: string | undefined,
    offeredId: string | undefined
  ) => Promise<BareAnswer>
}

/** The largest body a bare server reads, as walletgate's default. */
export const BARE_BODY_LIMIT = 100 * 1024
const HOUR_MS = 3_600_000
const CODE_TTL_SECONDS = 300
const RESEND_SECONDS = 60
const SENDS_PER_PHONE_PER_HOUR = 5
const utf8 = new TextDecoder("utf-8", { fatal: true })

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** The request's own id when it is sane, else a fresh one. */
const requestIdOf = (offered: string | undefined) =>
  offered !== undefined && SANE_REQUEST_ID.test(offered) ? offered : randomUUID()
const headers = (requestId: string, contentType: string, cacheControl = "no-store") => ({
  "cache-control": cacheControl,
  "content-type": contentType,
  "x-content-type-options": "nosniff",
  "x-request-id": requestId
})
const json = (requestId: string, status: number, body: unknown, cacheControl?: string): BareAnswer => ({
  status,
  headers: headers(requestId, "application/json", cacheControl),
  body: JSON.stringify(body)
})

/** The code records and hourly counters of walletgate's in-memory ports, for one test phone's sign-in. */
const otpState = () => {
  const secret = randomBytes(32).toString("hex")
  const codes = new Map<string, { codeHash: string; expiresAt: number; resendAt: number }>()
  const windows = new Map<string, { readonly start: number; count: number }>()
  const consume = (key: string, limit: number, now: number): boolean => {
    const start = now - (now % HOUR_MS)
    const window = windows.get(key)
    const current = window?.start === start ? window : { start, count: 0 }
    windows.set(key, current)
    if (current.count >= limit) return false
    current.count += 1
    return true
  }
  /** Whether a code may be sent now; records it when so. */
  return (phone: string, code: string, clientIp: string | undefined): boolean => {
    const now = Date.now()
    const codeHash = createHmac("sha256", secret).update(`${phone}:${code}`).digest("hex")
    const current = codes.get(phone)
    if (current !== undefined && current.resendAt > now) return false
    codes.set(phone, { codeHash, expiresAt: now + CODE_TTL_SECONDS * 1000, resendAt: now + RESEND_SECONDS * 1000 })
    const allowed =
      consume(`phone:${phone}`, SENDS_PER_PHONE_PER_HOUR, now) &&
      (clientIp === undefined || consume(`ip:${clientIp}`, Number.MAX_SAFE_INTEGER, now))
    if (!allowed) codes.delete(phone)
    return allowed
  }
}

/** The bare server's logic; `withState` adds the in-memory state work of a sign-in (see the top of this file). */
export const bareServer = (reference: Reference, options: { readonly withState: boolean }): BareServer => {
  const sendCode = options.withState ? otpState() : undefined
  const testCodes = new Map(Object.entries(testPhones()))
  return {
    isSignIn: (method, path) => method === "POST" && path === SIGN_IN_PATH,
    answer: (method, path, offeredId) =>
      method === "GET" && path === JWKS_PATH
        ? json(requestIdOf(offeredId), 200, reference.jwks, "public, max-age=300")
        : {
            status: 404,
            headers: headers(requestIdOf(offeredId), "application/problem+json"),
            body: JSON.stringify(reference.notFound)
          },
    signIn: async (contentType, readBody, clientIp, offeredId) => {
      const requestId = requestIdOf(offeredId)
      const refused = (status: number, error: string): BareAnswer => json(requestId, status, { error })
      if ((contentType ?? "").split(";")[0]?.trim().toLowerCase() !== "application/json") {
        return refused(415, "expected application/json")
      }
      const bytes = await readBody()
      if (bytes === undefined) return refused(400, "body required")
      if (bytes.byteLength > BARE_BODY_LIMIT) return refused(413, "body too large")
      let parsed: unknown
      try {
        parsed = JSON.parse(utf8.decode(bytes))
      } catch {
        return refused(400, "malformed JSON")
      }
      const phone = typeof parsed === "object" && parsed !== null && "phone" in parsed ? parsed.phone : undefined
      if (typeof phone !== "string" || phone.length > 32) return refused(400, "phone must be a string")
      const compact = phone.replace(/[\s\-().]/g, "")
      const code = testCodes.get(compact)
      if (code === undefined) return refused(400, "not a test phone")
      if (sendCode !== undefined && !sendCode(compact, code, clientIp)) return refused(429, "too many codes")
      return json(requestId, 200, { sent: true, expires_in: CODE_TTL_SECONDS, resend_after: RESEND_SECONDS })
    }
  }
}
