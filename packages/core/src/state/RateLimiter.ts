import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { count, rateLimited } from "../internal/telemetry"
import { type RateLimited, rateLimitedAfter, type StoreUnavailable } from "./errors"
import { makeFixedWindows } from "./fixedWindows"

/** How many ended windows the in-memory limiter forgets per call at most: more than one, to keep up with bursts. */

/** The outcome of counting one event against its limits. */
export type RateDecision =
  | { readonly allowed: true; readonly remaining: number }
  | {
      readonly allowed: false
      readonly retryAfterMs: number
      /** The keys of the limits that refused, in the order given. */
      readonly refused: ReadonlyArray<string>
    }

/**
 * One limit an event counts against: at most `limit` events per `key` in each window of `windowMs`, windows
 * aligned to multiples of `windowMs`. A key is `<scope>:<rest>`: the limits of one call share their scope.
 */
export interface RateLimit {
  readonly key: string
  readonly limit: number
  readonly windowMs: number
}

/**
 * The scope of a limit's key, the part before its first `:` (the whole key without one). A store keeps the keys
 * of a scope together (on Redis, in one hash slot), which is what lets one call count several of them atomically.
 */
const rateScopeOf = (key: string): string => {
  const colon = key.indexOf(":")
  return colon === -1 ? key : key.slice(0, colon)
}

/** The scope every limit of one call shares; throws (a defect: a bug in the caller) when they differ. */
export const sharedRateScope = (limits: ReadonlyArray<RateLimit>): string => {
  const scope = rateScopeOf(limits[0]?.key ?? "")
  for (const { key } of limits) {
    if (rateScopeOf(key) !== scope) throw new Error(`RateLimiter: the keys of one call span scopes (${scope}, ${key})`)
  }
  return scope
}

/**
 * Fixed-window counters. One call counts an event against several limits all or none, in one atomic step, so
 * concurrent callers (on one or many instances) never overshoot, and an event one limit refuses uses up no other
 * limit's budget.
 */
export class RateLimiter extends Context.Service<
  RateLimiter,
  {
    /**
     * Counts one event at `now` (ms) against every one of `limits` (at least one, distinct keys of one scope)
     * when all of them have room, and answers the least remaining; when any is full, counts it against none and
     * answers the keys that refused and the longest wait until one of their windows ends.
     */
    readonly consume: (
      limits: readonly [RateLimit, ...ReadonlyArray<RateLimit>],
      now: number
    ) => Effect.Effect<RateDecision, StoreUnavailable>
  }
>()("@walletgate/core/RateLimiter") {
  /** Counters in this process's memory: right for one instance, wrong for a fleet (use `@walletgate/redis`). */
  static readonly memory: Layer.Layer<RateLimiter> = Layer.sync(RateLimiter, () => {
    const windows = makeFixedWindows()
    return RateLimiter.of({
      consume: (limits, now) =>
        Effect.sync((): RateDecision => {
          if (limits.length > 1) sharedRateScope(limits)
          const counted = limits.map((limit) => ({ limit, window: windows.open(limit.key, limit.windowMs, now) }))
          let retryAfterMs = -1
          let refused: Array<string> | undefined
          for (const { limit, window } of counted) {
            if (window.count >= limit.limit) {
              retryAfterMs = Math.max(retryAfterMs, window.end - now)
              refused = [...(refused ?? []), limit.key]
            }
          }
          if (refused !== undefined) return { allowed: false, retryAfterMs, refused }
          let remaining = Number.POSITIVE_INFINITY
          for (const { limit, window } of counted) {
            window.count += 1
            remaining = Math.min(remaining, limit.limit - window.count)
          }
          return { allowed: true, remaining }
        })
    })
  })
}

/** Counts one event now against `limits` with `limiter` (see `RateLimiter.consume`); refused: `RateLimited`. */
export const admit = Effect.fnUntraced(function* (
  limiter: RateLimiter["Service"],
  limits: readonly [RateLimit, ...Array<RateLimit>]
): Effect.fn.Return<void, RateLimited | StoreUnavailable> {
  const decision = yield* limiter.consume(limits, yield* Clock.currentTimeMillis)
  if (!decision.allowed) {
    // Counted by the key's first part (`token`, `resolver`): the rest names a client or a caller.
    for (const key of decision.refused) yield* count(rateLimited, { limit: key.split(":")[0] ?? key })
    return yield* rateLimitedAfter(decision.retryAfterMs)
  }
})
