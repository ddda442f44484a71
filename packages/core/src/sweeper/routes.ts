import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Address } from "viem"
import type { ChainError } from "../chain/errors"
import { AddressString } from "../chain/schemas"
import { cacheableReply } from "../http/caching"
import { corsHeaders, preflightReply } from "../http/cors"
import { documented, type Route, type RouteContext, routeWithoutBody } from "../http/route"
import { clientGroupOf } from "../state/clientGroup"
import type { RateLimited, StoreUnavailable } from "../state/errors"
import { admit, RateLimiter } from "../state/RateLimiter"
import { InvalidAddress, type SweeperError } from "./errors"
import { SweeperLookups } from "./SweeperLookups"
import { OpenOrder, Order, WalletInfo } from "./schemas"
import { SweeperSettings } from "./settings"

/** What a lookup route may fail with. */
type LookupRouteError = SweeperError | ChainError | StoreUnavailable | RateLimited

const MINUTE_MS = 60_000

/**
 * The rate-limit key of a lookup's client: its IPv4 address or IPv6 /64. Requests whose client address is unknown
 * (a Lambda behind an ALB without `trustProxy`, a host that passes none) share one key: limited together, never
 * unlimited.
 */
const lookupKey = (clientIp: string | undefined): string => `sweeper:lookup:client:${clientGroupOf(clientIp)}`

/** Counts a lookup against its client's budget per minute; refused 429 `rate_limited` with `Retry-After` past it. */
const admitted = Effect.fnUntraced(function* (
  settings: SweeperSettings["Service"],
  clientIp: string | undefined
): Effect.fn.Return<void, RateLimited | StoreUnavailable, RateLimiter> {
  yield* admit(yield* RateLimiter, [
    { key: lookupKey(clientIp), limit: settings.lookupsPerIpPerMinute, windowMs: MINUTE_MS }
  ])
})

const isAddress = Schema.is(AddressString)

/** Exactly one address: `0x` and 40 hex digits; mixed case must carry its EIP-55 checksum. */
const addressOf = (param: string | undefined): Effect.Effect<Address, InvalidAddress> =>
  // The schema checked the `0x` and 40 hex digits that viem's `Address` type stands for.
  param !== undefined && isAddress(param) ? Effect.succeed(param as Address) : Effect.fail(new InvalidAddress())

/** CORS on every answer of these routes, errors included (a browser must be able to read a 400 or a 503). */
const cors = (context: RouteContext) =>
  SweeperSettings.useSync((settings) => corsHeaders(settings.corsOrigins, context.request))

/** A read-only, publicly cacheable lookup, with its preflight. */
const lookup = (
  path: string,
  summary: string,
  answer: Schema.Constraint,
  read: (lookups: SweeperLookups["Service"], context: RouteContext) => Effect.Effect<unknown, LookupRouteError>
): ReadonlyArray<Route<SweeperLookups | SweeperSettings | RateLimiter, LookupRouteError>> => [
  {
    ...documented(
      routeWithoutBody(
        "GET",
        path,
        Effect.fnUntraced(function* (context) {
          const settings = yield* SweeperSettings
          // Lookups are unauthenticated and each may read the chain: every client has a budget. A gateway without
          // sweeper settings answers 404 at no cost, and counts nothing.
          if (settings.network !== undefined) yield* admitted(settings, context.clientIp)
          const body = yield* read(yield* SweeperLookups, context)
          return cacheableReply(context.request, body, `public, max-age=${settings.maxAgeSeconds}`)
        })
      ),
      {
        summary,
        answers: [
          { status: 200, description: "The lookup.", schema: answer },
          { status: 304, description: "Not modified: `If-None-Match` names the current `ETag`." }
        ]
      }
    ),
    answerHeaders: cors
  },
  {
    ...documented(
      routeWithoutBody("OPTIONS", path, () => Effect.succeed(preflightReply(["GET", "OPTIONS"]))),
      { summary: "CORS preflight.", answers: [{ status: 204, description: "Allowed methods and headers." }] }
    ),
    answerHeaders: cors
  }
]

/** `GET /api/all-orders`, `GET /api/orders` and `GET /api/:address` (SPEC §4.5–4.7), each with its CORS preflight. */
export const sweeperRoutes: ReadonlyArray<Route<SweeperLookups | SweeperSettings | RateLimiter, LookupRouteError>> = [
  ...lookup(
    "/api/all-orders",
    "Every order: open ones and sweeps.",
    Schema.Array(Order),
    (lookups) => lookups.allOrders
  ),
  ...lookup("/api/orders", "The open orders.", Schema.Array(OpenOrder), (lookups) => lookups.openOrders),
  ...lookup("/api/:address", "An address's sweepable tokens and past sweeps.", WalletInfo, (lookups, context) =>
    Effect.flatMap(addressOf(context.params.address), lookups.wallet)
  )
]
