import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { type RateLimit, RateLimiter } from "../../state/RateLimiter"
import { concurrently, countOf, expectEqual, type PortContractCase, T0 } from "./contract"

const MINUTE = 60_000
const HOUR = 3_600_000
const allowed = (remaining: number) => ({ allowed: true, remaining }) as const
const refused = (retryAfterMs: number, ...keys: ReadonlyArray<string>) =>
  ({ allowed: false, retryAfterMs, refused: keys }) as const
/** A limit of `limit` per minute on `key` (in the `t` scope unless the key names its own). */
const perMinute = (key: string, limit: number, windowMs = MINUTE): RateLimit => ({ key, limit, windowMs })

const limiterCase = (name: string, run: (limiter: RateLimiter["Service"]) => Effect.Effect<void, unknown>) => ({
  name,
  run: RateLimiter.use(run)
})

/** The contract of `RateLimiter` (fixed windows, all or none): every implementation must pass every case. */
export const rateLimiterContract: ReadonlyArray<PortContractCase<RateLimiter>> = [
  limiterCase("allows limit events per window, counting down what remains, then refuses", (limiter) =>
    Effect.gen(function* () {
      const decisions = yield* Effect.forEach([1, 2, 3, 4], (i) => limiter.consume([perMinute("t:k", 3)], T0 + i))
      yield* expectEqual("decisions", decisions, [allowed(2), allowed(1), allowed(0), refused(MINUTE - 4, "t:k")])
    })
  ),
  limiterCase("says how long until the window ends", (limiter) =>
    Effect.gen(function* () {
      yield* limiter.consume([perMinute("t:k", 1)], T0 + 1000)
      yield* expectEqual("refused", yield* limiter.consume([perMinute("t:k", 1)], T0 + 45_000), refused(15_000, "t:k"))
    })
  ),
  limiterCase("aligns windows to multiples of windowMs, not to the first event", (limiter) =>
    Effect.gen(function* () {
      yield* expectEqual("first", yield* limiter.consume([perMinute("t:k", 1)], T0 + 50_000), allowed(0))
      yield* expectEqual(
        "last instant",
        yield* limiter.consume([perMinute("t:k", 1)], T0 + MINUTE - 1),
        refused(1, "t:k")
      )
      yield* expectEqual("next window", yield* limiter.consume([perMinute("t:k", 1)], T0 + MINUTE), allowed(0))
    })
  ),
  limiterCase("starts every window with the full limit", (limiter) =>
    Effect.gen(function* () {
      yield* Effect.forEach([1, 2, 3, 4, 5], (i) => limiter.consume([perMinute("t:k", 3)], T0 + i))
      const next = yield* Effect.forEach([0, 1, 2, 3], (i) => limiter.consume([perMinute("t:k", 3)], T0 + MINUTE + i))
      yield* expectEqual("next window", next, [allowed(2), allowed(1), allowed(0), refused(MINUTE - 3, "t:k")])
      const later = yield* limiter.consume([perMinute("t:k", 3)], T0 + 10 * MINUTE)
      yield* expectEqual("ten windows later", later, allowed(2))
    })
  ),
  limiterCase("keeps keys apart", (limiter) =>
    Effect.gen(function* () {
      yield* limiter.consume([perMinute("otp:send:ip:203.0.113.1", 1)], T0)
      yield* expectEqual("other key", yield* limiter.consume([perMinute("otp:send:ip:203.0.113.2", 1)], T0), allowed(0))
      yield* expectEqual(
        "same key",
        yield* limiter.consume([perMinute("otp:send:ip:203.0.113.1", 1)], T0),
        refused(MINUTE, "otp:send:ip:203.0.113.1")
      )
    })
  ),
  limiterCase("keeps scopes apart", (limiter) =>
    Effect.gen(function* () {
      yield* limiter.consume([perMinute("a:k", 1)], T0)
      yield* expectEqual("same rest, other scope", yield* limiter.consume([perMinute("b:k", 1)], T0), allowed(0))
    })
  ),
  limiterCase("counts an event against every limit when all have room, with the least remaining", (limiter) =>
    Effect.gen(function* () {
      const a = perMinute("t:a", 2)
      const b = perMinute("t:b", 5)
      yield* expectEqual("both allow", yield* limiter.consume([a, b], T0 + 1), allowed(1))
      yield* expectEqual("a alone", yield* limiter.consume([a], T0 + 2), allowed(0))
      yield* expectEqual("b alone", yield* limiter.consume([b], T0 + 3), allowed(3))
    })
  ),
  limiterCase("counts a refused event against none of its limits", (limiter) =>
    Effect.gen(function* () {
      const full = perMinute("t:full", 1)
      const roomy = perMinute("t:roomy", 2)
      yield* limiter.consume([full], T0)
      for (const i of [1, 2, 3]) {
        yield* expectEqual(`refused ${i}`, yield* limiter.consume([roomy, full], T0 + i), refused(MINUTE - i, "t:full"))
      }
      // The three refusals used none of roomy's two.
      yield* expectEqual("roomy", yield* limiter.consume([roomy], T0 + 4), allowed(1))
      yield* expectEqual("roomy again", yield* limiter.consume([roomy], T0 + 5), allowed(0))
      yield* expectEqual(
        "both full",
        yield* limiter.consume([full, roomy], T0 + 6),
        refused(MINUTE - 6, "t:full", "t:roomy")
      )
    })
  ),
  limiterCase("gives each limit its own window, and the longest wait of those that refuse", (limiter) =>
    Effect.gen(function* () {
      const minute = perMinute("t:minute", 1)
      const hour = perMinute("t:hour", 2, HOUR)
      yield* expectEqual("first", yield* limiter.consume([minute, hour], T0 + 1), allowed(0))
      yield* expectEqual("minute full", yield* limiter.consume([minute, hour], T0 + 2), refused(MINUTE - 2, "t:minute"))
      yield* expectEqual("next minute", yield* limiter.consume([minute, hour], T0 + MINUTE), allowed(0))
      yield* expectEqual(
        "both full",
        yield* limiter.consume([minute, hour], T0 + MINUTE + 1),
        refused(HOUR - MINUTE - 1, "t:minute", "t:hour")
      )
      yield* expectEqual(
        "hour full",
        yield* limiter.consume([minute, hour], T0 + 2 * MINUTE),
        refused(HOUR - 2 * MINUTE, "t:hour")
      )
      yield* expectEqual("next hour", yield* limiter.consume([minute, hour], T0 + HOUR), allowed(0))
    })
  ),
  limiterCase("refuses, as a defect, a call whose keys span scopes", (limiter) =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(limiter.consume([perMinute("a:k", 1), perMinute("b:k", 1)], T0))
      yield* expectEqual("died", Exit.isFailure(exit) && Exit.hasDies(exit), true)
    })
  ),
  limiterCase("never lets 100 concurrent events past a limit of 10", (limiter) =>
    Effect.gen(function* () {
      const decisions = yield* concurrently(100, () => limiter.consume([perMinute("t:k", 10)], T0 + 1))
      const remaining = decisions.flatMap((decision) => (decision.allowed ? [decision.remaining] : []))
      yield* expectEqual(
        "remaining of the allowed",
        remaining.sort((a, b) => a - b),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
      )
      yield* expectEqual("refused", countOf(decisions, refused(MINUTE - 1, "t:k")), 90)
    })
  ),
  limiterCase("counts 100 concurrent events against two limits all or none", (limiter) =>
    Effect.gen(function* () {
      const narrow = perMinute("t:narrow", 10)
      const wide = perMinute("t:wide", 50)
      const decisions = yield* concurrently(100, () => limiter.consume([wide, narrow], T0 + 1))
      yield* expectEqual("allowed", decisions.filter((decision) => decision.allowed).length, 10)
      // Only the ten allowed were counted against the wide limit: 40 of its 50 are left.
      const after = yield* Effect.forEach(Array.from({ length: 41 }), () => limiter.consume([wide], T0 + 2))
      yield* expectEqual("wide afterwards", after.filter((decision) => decision.allowed).length, 40)
    })
  )
]
