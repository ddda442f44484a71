import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type OperatorToken, operatorCheck } from "../auth/operator"
import type { RouteContext } from "../http/route"
import type { ProblemSlice } from "../internal/problem"
import { clientGroupOf } from "../state/clientGroup"
import { type RateLimited, rateLimitedAfter, type StoreUnavailable } from "../state/errors"
import { RateLimiter } from "../state/RateLimiter"
import type { OperatorCall } from "./schemas"

/** No operator token, or not one of the configured ones. Answered 401 `operator_unauthorized` with `WWW-Authenticate`. */
export class OperatorUnauthorized extends Schema.TaggedError<OperatorUnauthorized>()("OperatorUnauthorized", {}) {}

/** How the operator API's refusal is answered. */
export const operatorGuardProblems: ProblemSlice<OperatorUnauthorized> = {
  OperatorUnauthorized: {
    status: 401,
    code: "operator_unauthorized",
    title: "Unauthorized",
    detail: () => "The operator API needs Authorization: Bearer <operator token>.",
    headers: () => ({ "www-authenticate": 'Bearer realm="walletgate-operator"' })
  }
}

/** Requests to the operator API per client address per minute, by default (tokens or not). */
const OPERATOR_REQUESTS_PER_MINUTE_DEFAULT = 60

/** Settings of {@link operatorGuard}. */
export interface OperatorGuardOptions {
  /** The operator tokens, each with its id; at least one. */
  readonly tokens: ReadonlyArray<OperatorToken>
  /** Requests per client address (an IPv6 /64) per minute; default {@link OPERATOR_REQUESTS_PER_MINUTE_DEFAULT}. */
  readonly requestsPerMinute?: number
}

/**
 * The door of the operator API: counts the request against its client address's budget first (so guessing tokens
 * costs budget too, a refusal 429 with `Retry-After`), then checks the bearer token in constant time
 * (`operatorCheck`). Answers who acts, `api:<token id>@<client address>`, with the request id. The token is never
 * logged nor echoed.
 */
export const operatorGuard = (options: OperatorGuardOptions) => {
  if (options.tokens.length === 0) {
    throw new RangeError("the operator API needs at least one operator token (WALLETGATE_OPERATOR_TOKEN(S))")
  }
  const limit = options.requestsPerMinute ?? OPERATOR_REQUESTS_PER_MINUTE_DEFAULT
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError("requestsPerMinute must be a whole number from 1")
  const check = operatorCheck(options.tokens)
  return (
    context: RouteContext
  ): Effect.Effect<OperatorCall, OperatorUnauthorized | RateLimited | StoreUnavailable, RateLimiter> =>
    Effect.gen(function* () {
      const client = clientGroupOf(context.clientIp)
      const decision = yield* (yield* RateLimiter).consume(
        [{ key: `operator:ip:${client}`, limit, windowMs: 60_000 }],
        yield* Clock.currentTimeMillis
      )
      if (!decision.allowed) return yield* rateLimitedAfter(decision.retryAfterMs)
      const tokenId = check(context.request.headers.authorization)
      if (tokenId === undefined) return yield* new OperatorUnauthorized()
      return {
        actor: { kind: "api", tokenId, address: context.clientIp ?? "unknown" },
        requestId: context.requestId
      } satisfies OperatorCall
    })
}
