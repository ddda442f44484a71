import * as Effect from "effect/Effect"
import { GasLedger } from "../../state/GasLedger"
import { concurrently, countOf, expectEqual, type PortContractCase, T0 } from "./contract"

const HOUR = 3_600_000
const reserved = { reserved: true } as const
const refused = (budget: string, retryAfterMs: number) => ({ reserved: false, budget, retryAfterMs }) as const

const ledgerCase = (name: string, run: (ledger: GasLedger["Service"]) => Effect.Effect<void, unknown>) => ({
  name,
  run: GasLedger.use(run)
})

/** The contract of `GasLedger` (fixed windows, all-or-nothing reservations): every implementation must pass it. */
export const gasLedgerContract: ReadonlyArray<PortContractCase<GasLedger>> = [
  ledgerCase("gives back released gas in the window it was reserved in, never below zero", (ledger) =>
    Effect.gen(function* () {
      const budgets = [
        { name: "app", limit: 1_000 },
        { name: "user:a", limit: 500 }
      ] as const
      yield* expectEqual("first", yield* ledger.reserve("r:app", budgets, 400, HOUR, T0 + 1), reserved)
      yield* expectEqual("second", yield* ledger.reserve("r:app", budgets, 100, HOUR, T0 + 2), reserved)
      yield* ledger.release("r:app", ["app", "user:a"], 400, HOUR, T0 + 1, T0 + 3)
      yield* expectEqual("app", yield* ledger.used("r:app", "app", HOUR, T0 + 4), 100)
      yield* expectEqual("user", yield* ledger.used("r:app", "user:a", HOUR, T0 + 4), 100)
      yield* expectEqual("room again", yield* ledger.reserve("r:app", budgets, 400, HOUR, T0 + 5), reserved)
      yield* ledger.release("r:app", ["user:a"], 10_000, HOUR, T0 + 5, T0 + 6)
      yield* expectEqual("user at zero", yield* ledger.used("r:app", "user:a", HOUR, T0 + 7), 0)
      yield* expectEqual("app untouched", yield* ledger.used("r:app", "app", HOUR, T0 + 7), 500)
    })
  ),
  ledgerCase("gives back nothing in a later window, nor for a budget never reserved", (ledger) =>
    Effect.gen(function* () {
      const app = [{ name: "app", limit: 1_000 }] as const
      yield* expectEqual("last hour", yield* ledger.reserve("r:late", app, 300, HOUR, T0 + 1), reserved)
      yield* expectEqual("this hour", yield* ledger.reserve("r:late", app, 200, HOUR, T0 + HOUR + 1), reserved)
      yield* ledger.release("r:late", ["app"], 300, HOUR, T0 + 1, T0 + HOUR + 2)
      yield* expectEqual("kept", yield* ledger.used("r:late", "app", HOUR, T0 + HOUR + 3), 200)
      yield* ledger.release("r:none", ["app"], 300, HOUR, T0 + 1, T0 + 2)
      yield* expectEqual("none", yield* ledger.used("r:none", "app", HOUR, T0 + 3), 0)
    })
  ),
  ledgerCase("reserves up to the limit, refuses what would pass it without counting it, then fits smaller", (ledger) =>
    Effect.gen(function* () {
      const app = [{ name: "app", limit: 1_000_000 }] as const
      yield* expectEqual("first", yield* ledger.reserve("1:app:a", app, 600_000, HOUR, T0 + 1), reserved)
      yield* expectEqual(
        "too much",
        yield* ledger.reserve("1:app:a", app, 400_001, HOUR, T0 + 2),
        refused("app", HOUR - 2)
      )
      yield* expectEqual("used", yield* ledger.used("1:app:a", "app", HOUR, T0 + 3), 600_000)
      yield* expectEqual("exactly the rest", yield* ledger.reserve("1:app:a", app, 400_000, HOUR, T0 + 4), reserved)
      yield* expectEqual("full", yield* ledger.reserve("1:app:a", app, 1, HOUR, T0 + 5), refused("app", HOUR - 5))
      yield* expectEqual("used in full", yield* ledger.used("1:app:a", "app", HOUR, T0 + 6), 1_000_000)
    })
  ),
  ledgerCase("reserves in every budget of a call or in none, naming the first without room", (ledger) =>
    Effect.gen(function* () {
      const budgets = (user: string) =>
        [
          { name: "app", limit: 100 },
          { name: user, limit: 30 }
        ] as const
      yield* expectEqual("alice", yield* ledger.reserve("s", budgets("user:alice"), 30, HOUR, T0), reserved)
      // Alice's budget is spent: the app's is left as it was.
      yield* expectEqual(
        "alice again",
        yield* ledger.reserve("s", budgets("user:alice"), 1, HOUR, T0),
        refused("user:alice", HOUR)
      )
      yield* expectEqual("app after the refusal", yield* ledger.used("s", "app", HOUR, T0), 30)
      for (const user of ["user:bob", "user:carol"]) {
        yield* expectEqual(user, yield* ledger.reserve("s", budgets(user), 30, HOUR, T0), reserved)
      }
      // Dave's own budget is untouched, but the app has 10 left: refused by the app, and Dave's counts nothing.
      yield* expectEqual("dave", yield* ledger.reserve("s", budgets("user:dave"), 20, HOUR, T0), refused("app", HOUR))
      yield* expectEqual("dave's budget", yield* ledger.used("s", "user:dave", HOUR, T0), 0)
      yield* expectEqual("dave, smaller", yield* ledger.reserve("s", budgets("user:dave"), 10, HOUR, T0), reserved)
    })
  ),
  ledgerCase("aligns windows to multiples of windowMs and starts each one empty", (ledger) =>
    Effect.gen(function* () {
      const app = [{ name: "app", limit: 10 }] as const
      yield* expectEqual("late in the window", yield* ledger.reserve("s", app, 10, HOUR, T0 + HOUR - 1000), reserved)
      yield* expectEqual("last instant", yield* ledger.reserve("s", app, 1, HOUR, T0 + HOUR - 1), refused("app", 1))
      yield* expectEqual("next window", yield* ledger.reserve("s", app, 10, HOUR, T0 + HOUR), reserved)
      yield* expectEqual("used next", yield* ledger.used("s", "app", HOUR, T0 + HOUR + 1), 10)
      yield* expectEqual("ten windows later", yield* ledger.used("s", "app", HOUR, T0 + 10 * HOUR), 0)
      yield* expectEqual("then", yield* ledger.reserve("s", app, 10, HOUR, T0 + 10 * HOUR), reserved)
    })
  ),
  ledgerCase("keeps scopes and budget names apart", (ledger) =>
    Effect.gen(function* () {
      const one = [{ name: "app", limit: 5 }] as const
      yield* ledger.reserve("1:app:a", one, 5, HOUR, T0)
      yield* expectEqual("other scope", yield* ledger.reserve("1:app:b", one, 5, HOUR, T0), reserved)
      yield* expectEqual("other chain", yield* ledger.reserve("2:app:a", one, 5, HOUR, T0), reserved)
      yield* expectEqual(
        "other name",
        yield* ledger.reserve("1:app:a", [{ name: "apps", limit: 5 }], 5, HOUR, T0),
        reserved
      )
      yield* expectEqual("same", yield* ledger.reserve("1:app:a", one, 1, HOUR, T0), refused("app", HOUR))
      yield* expectEqual("unknown", yield* ledger.used("1:app:c", "app", HOUR, T0), 0)
    })
  ),
  ledgerCase("counts gas exactly up to 2^53 - 1", (ledger) =>
    Effect.gen(function* () {
      const limit = Number.MAX_SAFE_INTEGER
      const big = [{ name: "network", limit }] as const
      yield* expectEqual("most", yield* ledger.reserve("s", big, limit - 1, HOUR, T0), reserved)
      yield* expectEqual("used", yield* ledger.used("s", "network", HOUR, T0), limit - 1)
      yield* expectEqual("the last unit", yield* ledger.reserve("s", big, 1, HOUR, T0), reserved)
      yield* expectEqual("one past", yield* ledger.reserve("s", big, 1, HOUR, T0), refused("network", HOUR))
      yield* expectEqual("used in full", yield* ledger.used("s", "network", HOUR, T0), limit)
    })
  ),
  ledgerCase("never lets 100 concurrent reservations past a budget: exactly as many as fit", (ledger) =>
    Effect.gen(function* () {
      // 100 users of one app, each reserving 70 000 gas at once, against an app budget of 1 000 000: 14 fit.
      const outcomes = yield* concurrently(100, (index) =>
        ledger.reserve(
          "1:app:a",
          [
            { name: "app", limit: 1_000_000 },
            { name: `user:${index}`, limit: 100_000 }
          ],
          70_000,
          HOUR,
          T0 + 1
        )
      )
      yield* expectEqual("reserved", countOf(outcomes, reserved), 14)
      yield* expectEqual("refused by the app", countOf(outcomes, refused("app", HOUR - 1)), 86)
      yield* expectEqual("used", yield* ledger.used("1:app:a", "app", HOUR, T0 + 2), 980_000)
    })
  )
]
