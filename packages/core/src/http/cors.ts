import type { GatewayRequest } from "./contract"
import type { Reply } from "./route"

/** Which origins may read an endpoint's answers from a browser: any (`"*"`), or exactly these. */
export type CorsOrigins = "*" | ReadonlyArray<string>

/** The answer headers a browser script may read besides the CORS-safelisted ones (Fetch standard §3.2.7). */
const EXPOSED = "etag, retry-after, x-request-id"

/**
 * The CORS headers of an answer to `request` (Fetch standard §3.2). For `"*"`, any origin; for a list,
 * the request's `Origin` when listed (and `Vary: Origin`, so shared caches keep one answer per origin).
 * Never credentials: these endpoints are public reads.
 */
export const corsHeaders = (origins: CorsOrigins, request: GatewayRequest): Readonly<Record<string, string>> => {
  if (origins === "*") return { "access-control-allow-origin": "*", "access-control-expose-headers": EXPOSED }
  const origin = request.headers.origin
  return origin !== undefined && origins.includes(origin)
    ? { "access-control-allow-origin": origin, "access-control-expose-headers": EXPOSED, vary: "origin" }
    : { vary: "origin" }
}

/**
 * The answer to a CORS preflight (`OPTIONS`): 204 allowing `methods` and the request headers a
 * read may carry, remembered by the browser for `maxAgeSeconds`. The origin headers come from
 * {@link corsHeaders}; a browser refuses the actual request when they do not name its origin.
 */
export const preflightReply = (methods: ReadonlyArray<string>, maxAgeSeconds = 600): Reply => ({
  status: 204,
  body: undefined,
  headers: {
    "access-control-allow-methods": methods.join(", "),
    "access-control-allow-headers": "if-none-match, x-request-id",
    "access-control-max-age": String(maxAgeSeconds)
  }
})
