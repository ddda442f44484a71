import * as Effect from "effect/Effect"
import type { Route } from "../http/route"
import type { Tagged } from "../internal/problem"
import { AccessTokenRefused, Forbidden, PermanentlyRefused, TokenRejected } from "./errors"

/**
 * The statuses of refusals on the routes of apps: `standard` (RFC 6750: an invalid or expired token 401, a
 * refusal 403) or `patch`, for clients written for Paymagic's Patch Wallet API, which fetch a new token on
 * every 403 and never retry a 401 (an invalid or expired token 403, a refusal no new token changes 422).
 */
export type ClientStatuses = "standard" | "patch"

/** `routes` answering their token errors and refusals with the statuses of `statuses` (docs/paymagic.md). */
export const withClientStatuses = <R, E extends Tagged>(
  statuses: ClientStatuses,
  routes: ReadonlyArray<Route<R, E>>
): ReadonlyArray<Route<R, E | AccessTokenRefused | PermanentlyRefused>> =>
  statuses === "standard"
    ? routes
    : routes.map((route) => ({
        ...route,
        run: (body, context) =>
          route.run(body, context).pipe(
            Effect.mapError((error) => {
              if (error instanceof TokenRejected) return new AccessTokenRefused({ reason: error.reason })
              if (error instanceof Forbidden) return new PermanentlyRefused({ reason: error.reason })
              return error
            })
          )
      }))
