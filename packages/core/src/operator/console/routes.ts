import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { cacheableReply } from "../../http/caching"
import { documented, type Reply, type Route, type RouteContext, routeWithoutBody, ServedText } from "../../http/route"
import { CONSOLE_CSS, CONSOLE_HTML, CONSOLE_JS } from "./assets.generated"

/**
 * The operator console's Content Security Policy: its own script and stylesheet only (no inline script or style, no
 * other origin, no `eval`), API calls to its own origin only, no `<base>`, no form submission, never in a frame.
 */
const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/** The headers of every answer of the console (the gateway adds `x-content-type-options: nosniff`). */
const CONSOLE_HEADERS = {
  "content-security-policy": CONSOLE_CSP,
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin"
} as const

/**
 * The page and its two files, each revalidated on every use (`no-cache` with a strong `ETag`, a 304 when unchanged):
 * an upgraded gateway's console is the one its browser loads next.
 */
const asset = (path: string, body: ServedText, summary: string, mediaType: string): Route<never, never> =>
  documented(
    routeWithoutBody("GET", path, (context: RouteContext): Effect.Effect<Reply> => {
      const reply = cacheableReply(context.request, body, "no-cache")
      return Effect.succeed({ ...reply, headers: { ...CONSOLE_HEADERS, ...reply.headers } })
    }),
    { summary, answers: [{ status: 200, description: summary, mediaType, schema: Schema.String }] }
  )

/**
 * `GET /operator`, `/operator/console.js` and `/operator/console.css`: the operator console, a page over the operator
 * API that asks for the operator token itself (typed in, or from the URL fragment `#token=…`). The files hold no
 * data, so they are served without the token; every value the page shows comes from the operator API, behind it.
 * The page's URLs are relative, so it works under any mount.
 */
export const consoleRoutes: ReadonlyArray<Route<never, never>> = [
  asset(
    "/operator",
    new ServedText(CONSOLE_HTML, "text/html; charset=utf-8"),
    "The operator console (HTML): signs in with an operator token and works over the operator API.",
    "text/html"
  ),
  asset(
    "/operator/console.js",
    new ServedText(CONSOLE_JS, "text/javascript; charset=utf-8"),
    "The operator console's script (an ES module).",
    "text/javascript"
  ),
  asset(
    "/operator/console.css",
    new ServedText(CONSOLE_CSS, "text/css; charset=utf-8"),
    "The operator console's stylesheet.",
    "text/css"
  )
]
