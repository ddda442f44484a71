import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { AppAuth } from "../auth/AppAuth"
import type { App } from "../auth/apps"
import { decoderOf, documented, routeWithBody } from "../http/route"
import { KeyVault } from "../operations/KeyVault"
import { identitySafe } from "../operations/safeAccount"
import { clientGroupOf } from "../state/clientGroup"
import { admit, RateLimiter } from "../state/RateLimiter"
import { UserIdParam } from "./schemas"

/** Most user ids in one `POST /v1/resolver`. */
const MAX_RESOLVED_USER_IDS = 50

/** Body of `POST /v1/resolver`: the user ids whose wallet addresses are asked for. */
export const ResolveRequest = Schema.Struct({
  userIds: Schema.Array(UserIdParam).check(
    Schema.isMinLength(1, { message: "Expected at least 1 user id" }),
    Schema.isMaxLength(MAX_RESOLVED_USER_IDS, { message: `Expected at most ${MAX_RESOLVED_USER_IDS} user ids` })
  )
})

/** Answer of `POST /v1/resolver`: each user id with its wallet's address, in the order asked. */
export const ResolveResponse = Schema.Struct({
  users: Schema.Array(Schema.Struct({ userId: Schema.String, accountAddress: Schema.String }))
})

/** Who may ask `POST /v1/resolver`, and how often. */
export interface ResolverOptions {
  /**
   * `app` (default): an app's Bearer token is required, and only ids of providers it is granted resolve. `open`:
   * anyone may ask for the ids of every registered provider (Paymagic's SDK sends no token), which lets anyone
   * link a phone number or a handle to its wallet on chain; an app's token, when sent, still counts.
   */
  readonly access?: "app" | "open"
  /** Requests per minute per app (or, without a token, per client address group); default 60. */
  readonly perMinute?: number
}

const decodeResolve = decoderOf(ResolveRequest, { exact: true })

/**
 * The Patch SDK's form of the body: `userIds` as one comma-separated string, read as the list it names (the list
 * is then checked like any other).
 */
const listed = (body: unknown): unknown =>
  typeof body === "object" && body !== null && "userIds" in body && typeof body.userIds === "string"
    ? { ...body, userIds: body.userIds.split(",").map((userId) => userId.trim()) }
    : body

/**
 * `POST /v1/resolver`: the wallet address of each user id, a pure function of the id and the deployment, the same
 * before and after its owner signs in and on every chain (a counterfactual Safe).
 */
export const resolverRoute = (options: ResolverOptions = {}) => {
  const open = options.access === "open"
  const perMinute = options.perMinute ?? 60
  return documented(
    routeWithBody(
      "POST",
      "/v1/resolver",
      Schema.Unknown,
      Effect.fnUntraced(function* (body, context) {
        const appAuth = yield* AppAuth
        const authorization = context.request.headers.authorization
        const app: App | undefined =
          open && authorization === undefined ? undefined : yield* appAuth.authenticate(authorization)
        const caller = app === undefined ? `ip:${clientGroupOf(context.clientIp)}` : `app:${app.clientId}`
        yield* admit(yield* RateLimiter, [{ key: `resolver:${caller}`, limit: perMinute, windowMs: 60_000 }])
        const request = yield* decodeResolve(listed(body))
        const vault = yield* KeyVault
        const users = yield* Effect.forEach(request.userIds, (userId) =>
          appAuth.identityOf(app, userId).pipe(
            Effect.flatMap((identity) =>
              vault.owner(identity).pipe(Effect.map((owner) => identitySafe(owner.address, identity)))
            ),
            Effect.map((account) => ({ userId, accountAddress: account.address }))
          )
        )
        return { status: 200, body: { users } satisfies typeof ResolveResponse.Type }
      })
    ),
    {
      summary: "The wallet address of each user id, before or after its owner signs in.",
      ...(open ? {} : { security: "bearer" as const }),
      body: ResolveRequest,
      answers: [{ status: 200, description: "The addresses, in the order asked.", schema: ResolveResponse }]
    }
  )
}
