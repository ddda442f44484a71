import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import { documented, type Reply, type RouteContext, routeWithBody } from "../http/route"
import { AppAuth, type ClientCredentials } from "./AppAuth"
import { OAuthError } from "./errors"

/** Answer of `POST /v1/auth` (RFC 6749 §5.1). */
export const AccessTokenResponse = Schema.Struct({
  access_token: Schema.String,
  token_type: Schema.Literal("bearer"),
  expires_in: Schema.Int
})

/** Body of `POST /v1/auth`, as the handler reads it (JSON or form); the credentials may come by HTTP Basic instead. */
const AccessTokenRequest = Schema.Struct({
  grant_type: Schema.optionalKey(Schema.Literal("client_credentials")),
  client_id: Schema.optionalKey(Schema.String),
  client_secret: Schema.optionalKey(Schema.String)
})

/** The RFC 6749 §5.2 error answer of `POST /v1/auth`. */
const OAuthErrorResponse = Schema.Struct({ error: OAuthError.fields.error, error_description: Schema.String })

// RFC 6749 §5.1: token answers must not be cached.
const NO_CACHE = { "cache-control": "no-store", pragma: "no-cache" }

/** The RFC 6749 §5.2 error answer. */
const oauthErrorReply = (error: OAuthError): Reply => ({
  status: error.error === "invalid_client" ? 401 : 400,
  body: { error: error.error, error_description: error.description },
  headers: {
    ...NO_CACHE,
    ...(error.error === "invalid_client" && error.basic ? { "www-authenticate": 'Basic realm="walletgate"' } : {})
  }
})

const fail = (error: OAuthError["error"], description: string, basic = false) =>
  Effect.fail(new OAuthError({ error, description, basic }))

/** The client credentials of a token request: in the body, or HTTP Basic (RFC 6749 §2.3.1), never both. */
const credentialsOf = (body: unknown, context: RouteContext) =>
  Effect.suspend((): Effect.Effect<ClientCredentials, OAuthError> => {
    if (!Predicate.isObject(body) || Array.isArray(body)) return fail("invalid_request", "The body must be an object.")
    const field = (name: string) => {
      const value = (body as Record<string, unknown>)[name]
      return typeof value === "string" ? value : undefined
    }
    const form = (context.request.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded")
    const grantType = field("grant_type")
    // Existing clients send JSON without grant_type; the RFC's form encoding requires it.
    if (grantType === undefined ? form : grantType !== "client_credentials") {
      return grantType === undefined
        ? fail("invalid_request", "grant_type is required.")
        : fail("unsupported_grant_type", "Only client_credentials is supported.")
    }
    const basic = /^Basic +([A-Za-z0-9+/]+=*)$/i.exec(context.request.headers.authorization?.trim() ?? "")
    const inBody = field("client_id") !== undefined || field("client_secret") !== undefined
    if (basic?.[1] !== undefined) {
      if (inBody) return fail("invalid_request", "Use one client authentication method.", true)
      const decoded = Buffer.from(basic[1], "base64").toString("utf8")
      const colon = decoded.indexOf(":")
      if (colon < 0) return fail("invalid_client", "Malformed Basic credentials.", true)
      try {
        return Effect.succeed({
          clientId: decodeURIComponent(decoded.slice(0, colon).replaceAll("+", " ")),
          clientSecret: decodeURIComponent(decoded.slice(colon + 1).replaceAll("+", " ")),
          basic: true
        })
      } catch {
        return fail("invalid_client", "Malformed Basic credentials.", true)
      }
    }
    const clientId = field("client_id")
    const clientSecret = field("client_secret")
    if (clientId === undefined || clientSecret === undefined) {
      return fail("invalid_client", "client_id and client_secret are required.")
    }
    return Effect.succeed({ clientId, clientSecret, basic: false })
  })

/** `POST /v1/auth`: the OAuth 2.0 client-credentials grant, in JSON or the RFC's form encoding. */
export const authRoutes = [
  documented(
    routeWithBody(
      "POST",
      "/v1/auth",
      Schema.Unknown,
      Effect.fnUntraced(
        function* (body, context) {
          const credentials = yield* credentialsOf(body, context)
          const appAuth = yield* AppAuth
          const granted = yield* appAuth.grant(credentials)
          const reply: typeof AccessTokenResponse.Type = {
            access_token: granted.accessToken,
            token_type: "bearer",
            expires_in: granted.expiresIn
          }
          return { status: 200, body: reply, headers: NO_CACHE }
        },
        Effect.catchTag("OAuthError", (error) => Effect.succeed(oauthErrorReply(error)))
      ),
      ["application/json", "application/x-www-form-urlencoded"]
    ),
    {
      summary: "Grants an app an access token (OAuth 2.0 client credentials).",
      security: "clientCredentials",
      body: AccessTokenRequest,
      answers: [
        { status: 200, description: "The access token.", schema: AccessTokenResponse },
        { status: 400, description: "OAuth error (RFC 6749 §5.2).", schema: OAuthErrorResponse },
        { status: 401, description: "OAuth error `invalid_client`.", schema: OAuthErrorResponse }
      ]
    }
  )
]
