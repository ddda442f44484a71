import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { StoreUnavailable } from "../state/errors"

/** How many ended windows the in-memory limiter forgets per call at most: more than one, to keep up with bursts. */
const ENDED_FORGOTTEN_PER_CALL = 8

/** The outcome of counting one event against a limit. */
export type RateDecision =
  | { readonly allowed: true; readonly remaining: number }
  | { readonly allowed: false; readonly retryAfterMs: number }

/** One limit an event counts against: at most `limit` events per `key` in each window. */
export interface RateLimit {
  readonly key: string
  readonly limit: number
}

/**
 * The decision over several limits, each decided on its own: allowed when every one allows (with the least
 * remaining), else refused for as long as the longest of the refusing ones waits.
 */
export const combinedDecision = (decisions: ReadonlyArray<RateDecision>): RateDecision => {
  let remaining = Number.POSITIVE_INFINITY
  let retryAfterMs = -1
  for (const decision of decisions) {
    if (decision.allowed) remaining = Math.min(remaining, decision.remaining)
    else retryAfterMs = Math.max(retryAfterMs, decision.retryAfterMs)
  }
  return retryAfterMs >= 0 ? { allowed: false, retryAfterMs } : { allowed: true, remaining }
}

/**
 * Fixed-window counters: at most `limit` events per `key` in each window of `windowMs`. Counting and
 * deciding are one atomic step per key, so concurrent callers (on one or many instances) never overshoot.
 */
export class RateLimiter extends Context.Service<
  RateLimiter,
  {
    /**
     * Counts one event at `now` (ms) against each of `limits` (at least one), each in its own windows of
     * `windowMs`, and says whether it is within all of them ({@link combinedDecision}). A limit that refuses
     * does not count the event; the others still do. One call, so a remote store answers in one round trip.
     */
    readonly consume: (
      limits: readonly [RateLimit, ...ReadonlyArray<RateLimit>],
      windowMs: number,
      now: number
    ) => Effect.Effect<RateDecision, StoreUnavailable>
  }
>()("@walletgate/core/RateLimiter") {
  /** Counters in this process's memory: right for one instance, wrong for a fleet (use `@walletgate/redis`). */
  static readonly memory: Layer.Layer<RateLimiter> = Layer.sync(RateLimiter, () => {
    interface Window {
      readonly start: number
      readonly end: number
      count: number
    }
    // Windows stand in the order they began (a key's new window moves it to the end), so the ended ones are at
    // the front: calls forget a few of them there once the front one has ended, and no call walks the whole map.
    // A key with a shorter window behind a longer one is forgotten when the longer one ends.
    const windows = new Map<string, Window>()
    /** No window can be forgotten before this instant: the front window's end (Infinity when there is none). */
    let nextForget = Number.POSITIVE_INFINITY
    const forgetEnded = (now: number) => {
      if (now < nextForget) return
      let budget = ENDED_FORGOTTEN_PER_CALL
      for (const [key, window] of windows) {
        if (window.end > now) {
          nextForget = window.end
          return
        }
        // More may have ended: the next call goes on from here.
        if (budget-- === 0) return
        windows.delete(key)
      }
      nextForget = Number.POSITIVE_INFINITY
    }
    const consumeOne = ({ key, limit }: RateLimit, windowMs: number, now: number): RateDecision => {
      const start = now - (now % windowMs)
      let current = windows.get(key)
      if (current?.start !== start) {
        if (current !== undefined) windows.delete(key)
        current = { start, end: start + windowMs, count: 0 }
        windows.set(key, current)
        nextForget = Math.min(nextForget, current.end)
      }
      if (current.count >= limit) return { allowed: false, retryAfterMs: current.end - now }
      current.count += 1
      return { allowed: true, remaining: limit - current.count }
    }
    return RateLimiter.of({
      consume: (limits, windowMs, now) =>
        Effect.sync((): RateDecision => {
          forgetEnded(now)
          return limits.length === 1
            ? consumeOne(limits[0], windowMs, now)
            : combinedDecision(limits.map((limit) => consumeOne(limit, windowMs, now)))
        })
    })
  })
}
