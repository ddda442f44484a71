import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { StoreUnavailable } from "../state/errors"

/** The outcome of counting one event against a limit. */
export type RateDecision =
  | { readonly allowed: true; readonly remaining: number }
  | { readonly allowed: false; readonly retryAfterMs: number }

/**
 * Fixed-window counters: at most `limit` events per `key` in each window of `windowMs`. Counting and
 * deciding are one atomic step, so concurrent callers (on one or many instances) never overshoot.
 */
export class RateLimiter extends Context.Service<
  RateLimiter,
  {
    /** Counts one event for `key` at `now` (ms) and says whether it is within the limit. */
    readonly consume: (
      key: string,
      limit: number,
      windowMs: number,
      now: number
    ) => Effect.Effect<RateDecision, StoreUnavailable>
  }
>()("@walletgate/core/RateLimiter") {
  /** Counters in this process's memory: right for one instance, wrong for a fleet (use `@walletgate/redis`). */
  static readonly memory: Layer.Layer<RateLimiter> = Layer.sync(RateLimiter, () => {
    const windows = new Map<string, { readonly start: number; count: number }>()
    let nextSweep = 0
    return RateLimiter.of({
      consume: (key, limit, windowMs, now) =>
        Effect.sync(() => {
          const start = now - (now % windowMs)
          if (now >= nextSweep) {
            nextSweep = now + 60_000
            for (const [k, w] of windows) if (w.start + windowMs <= now) windows.delete(k)
          }
          let current = windows.get(key)
          if (current?.start !== start) {
            current = { start, count: 0 }
            windows.set(key, current)
          }
          if (current.count >= limit) return { allowed: false, retryAfterMs: start + windowMs - now }
          current.count += 1
          return { allowed: true, remaining: limit - current.count }
        })
    })
  })
}
