import * as Effect from "effect/Effect"
import { RateLimiter } from "../../ratelimit/RateLimiter"
import { concurrently, countOf, expectEqual, type PortContractCase, T0 } from "./contract"

const MINUTE = 60_000
const allowed = (remaining: number) => ({ allowed: true, remaining }) as const
const refused = (retryAfterMs: number) => ({ allowed: false, retryAfterMs }) as const

const limiterCase = (name: string, run: (limiter: RateLimiter["Service"]) => Effect.Effect<void, unknown>) => ({
  name,
  run: RateLimiter.use(run)
})

/** The contract of `RateLimiter` (fixed windows): every implementation must pass every case. */
export const rateLimiterContract: ReadonlyArray<PortContractCase<RateLimiter>> = [
  limiterCase("allows limit events per window, counting down what remains, then refuses", (limiter) =>
    Effect.gen(function* () {
      const decisions = yield* Effect.forEach([1, 2, 3, 4], (i) =>
        limiter.consume([{ key: "k", limit: 3 }], MINUTE, T0 + i)
      )
      yield* expectEqual("decisions", decisions, [allowed(2), allowed(1), allowed(0), refused(MINUTE - 4)])
    })
  ),
  limiterCase("says how long until the window ends", (limiter) =>
    Effect.gen(function* () {
      yield* limiter.consume([{ key: "k", limit: 1 }], MINUTE, T0 + 1000)
      yield* expectEqual(
        "refused",
        yield* limiter.consume([{ key: "k", limit: 1 }], MINUTE, T0 + 45_000),
        refused(15_000)
      )
    })
  ),
  limiterCase("aligns windows to multiples of windowMs, not to the first event", (limiter) =>
    Effect.gen(function* () {
      yield* expectEqual("first", yield* limiter.consume([{ key: "k", limit: 1 }], MINUTE, T0 + 50_000), allowed(0))
      yield* expectEqual(
        "last instant",
        yield* limiter.consume([{ key: "k", limit: 1 }], MINUTE, T0 + MINUTE - 1),
        refused(1)
      )
      yield* expectEqual(
        "next window",
        yield* limiter.consume([{ key: "k", limit: 1 }], MINUTE, T0 + MINUTE),
        allowed(0)
      )
    })
  ),
  limiterCase("starts every window with the full limit", (limiter) =>
    Effect.gen(function* () {
      yield* Effect.forEach([1, 2, 3, 4, 5], (i) => limiter.consume([{ key: "k", limit: 3 }], MINUTE, T0 + i))
      const next = yield* Effect.forEach([0, 1, 2, 3], (i) =>
        limiter.consume([{ key: "k", limit: 3 }], MINUTE, T0 + MINUTE + i)
      )
      yield* expectEqual("next window", next, [allowed(2), allowed(1), allowed(0), refused(MINUTE - 3)])
      const later = yield* limiter.consume([{ key: "k", limit: 3 }], MINUTE, T0 + 10 * MINUTE)
      yield* expectEqual("ten windows later", later, allowed(2))
    })
  ),
  limiterCase("keeps keys apart", (limiter) =>
    Effect.gen(function* () {
      yield* limiter.consume([{ key: "otp:send:ip:203.0.113.1", limit: 1 }], MINUTE, T0)
      yield* expectEqual(
        "other key",
        yield* limiter.consume([{ key: "otp:send:ip:203.0.113.2", limit: 1 }], MINUTE, T0),
        allowed(0)
      )
      yield* expectEqual(
        "same key",
        yield* limiter.consume([{ key: "otp:send:ip:203.0.113.1", limit: 1 }], MINUTE, T0),
        refused(MINUTE)
      )
    })
  ),
  limiterCase("counts an event against each of several limits on its own; refused if any refuses", (limiter) =>
    Effect.gen(function* () {
      const a = { key: "a", limit: 1 }
      const b = { key: "b", limit: 3 }
      yield* expectEqual("both allow", yield* limiter.consume([a, b], MINUTE, T0 + 1), allowed(0))
      yield* expectEqual("a refuses", yield* limiter.consume([a, b], MINUTE, T0 + 2), refused(MINUTE - 2))
      // b counted the refused event too: this is its third.
      yield* expectEqual("b alone", yield* limiter.consume([b], MINUTE, T0 + 3), allowed(0))
      yield* expectEqual("b full", yield* limiter.consume([b, a], MINUTE, T0 + 4), refused(MINUTE - 4))
    })
  ),
  limiterCase("never lets 100 concurrent events past a limit of 10", (limiter) =>
    Effect.gen(function* () {
      const decisions = yield* concurrently(100, () => limiter.consume([{ key: "k", limit: 10 }], MINUTE, T0 + 1))
      const remaining = decisions.flatMap((decision) => (decision.allowed ? [decision.remaining] : []))
      yield* expectEqual(
        "remaining of the allowed",
        remaining.sort((a, b) => a - b),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
      )
      yield* expectEqual("refused", countOf(decisions, refused(MINUTE - 1)), 90)
    })
  )
]
