import { GasLedger, SpendPolicy } from "@walletgate/core"
import { liveSpendLimits, type SpendLimitsOptions, testnetSpendLimits } from "@walletgate/core/chain"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { resolveSpendLimits } from "../../src/chain/spendLimits"

const network = (spend: SpendLimitsOptions) => ({
  slug: "anvil",
  chainId: 31337,
  spend: resolveSpendLimits("anvil", true, { windowSeconds: 604_800, ...spend })
})

/** Runs `effect` with a fresh policy over a fresh in-memory ledger; its failure, if any, as a value. */
const run = <A, E>(effect: Effect.Effect<A, E, SpendPolicy>) =>
  Effect.runPromise(
    effect.pipe(Effect.result, Effect.provide(SpendPolicy.layer.pipe(Layer.provideMerge(GasLedger.memory))))
  )

describe("resolveSpendLimits", () => {
  it("takes the test or live defaults, and any field given", () => {
    expect(resolveSpendLimits("anvil", true)).toEqual(testnetSpendLimits)
    expect(resolveSpendLimits("base", false)).toEqual(liveSpendLimits)
    expect(resolveSpendLimits("base", false, { perApp: 50_000_000 })).toEqual({
      ...liveSpendLimits,
      perApp: 50_000_000
    })
  })

  it("refuses at start a limit out of range, or a ceiling no window could ever hold", () => {
    expect(() => resolveSpendLimits("base", false, { perUser: 0 })).toThrow(/spend.perUser/)
    expect(() => resolveSpendLimits("base", false, { perApp: 1.5 })).toThrow(/spend.perApp/)
    expect(() => resolveSpendLimits("base", false, { windowSeconds: 604_801 })).toThrow(/windowSeconds/)
    expect(() => resolveSpendLimits("base", false, { perNetwork: 2 ** 53 })).toThrow(/perNetwork/)
    expect(() => resolveSpendLimits("base", false, { batchCeiling: 3_000_001 })).toThrow(
      /batchCeiling must not exceed spend.perUser/
    )
    expect(() => resolveSpendLimits("base", false, { payoutCeiling: 20_000_001 })).toThrow(
      /payoutCeiling must not exceed spend.perApiKey/
    )
  })
})

describe("SpendPolicy", () => {
  it("refuses an operation over its ceiling before it counts anywhere", async () => {
    const anvil = network({ batchCeiling: 100, payoutCeiling: 100, perUser: 1000, perApp: 1000, perNetwork: 1000 })
    const result = await run(
      Effect.gen(function* () {
        const policy = yield* SpendPolicy
        const refused = yield* policy.reserve(anvil, { kind: "batch", app: "a", user: "u" }, 101n).pipe(Effect.flip)
        return { refused, use: yield* policy.use(anvil) }
      })
    )
    expect(result._tag).toBe("Success")
    if (result._tag !== "Success") return
    expect(result.success.refused).toMatchObject({ _tag: "GasCeilingExceeded", gas: "101", ceiling: "100" })
    expect(result.success.use.networkGasUsed).toBe(0)
  })

  it("counts a payer out of budget against nobody else: the network's budget stays for the other apps", async () => {
    const anvil = network({ batchCeiling: 100, payoutCeiling: 100, perUser: 100, perApp: 100, perNetwork: 250 })
    const result = await run(
      Effect.gen(function* () {
        const policy = yield* SpendPolicy
        const batch = (app: string, user: string) => policy.reserve(anvil, { kind: "batch", app, user }, 100n)
        yield* batch("greedy", "u")
        // A hundred refused requests of the greedy app leave the network's budget as it was.
        for (let i = 0; i < 100; i++) yield* batch("greedy", `u${i % 2}`).pipe(Effect.ignore)
        const afterRefusals = (yield* policy.use(anvil)).networkGasUsed
        yield* batch("second", "u")
        const exhausted = yield* batch("third", "u").pipe(Effect.flip)
        return { afterRefusals, exhausted }
      })
    )
    expect(result._tag).toBe("Success")
    if (result._tag !== "Success") return
    // greedy's u1 (its app budget was spent) never reached the network: 100 reserved, not more.
    expect(result.success.afterRefusals).toBe(100)
    expect(result.success.exhausted).toMatchObject({ _tag: "GasBudgetExhausted", budget: "network" })
  })

  it("keeps user ids apart however they are spelt, and apart from other apps", async () => {
    const anvil = network({ batchCeiling: 100, perUser: 100, perApp: 10_000 })
    const result = await run(
      Effect.gen(function* () {
        const policy = yield* SpendPolicy
        const batch = (app: string, user: string) => policy.reserve(anvil, { kind: "batch", app, user }, 100n)
        yield* batch("a", "phone:x")
        for (const [app, user] of [
          ["a", "phone%3Ax"],
          ["a", "phone:x}"],
          ["a:app:a", "phone:x"],
          ["b", "phone:x"]
        ] as const) {
          yield* batch(app, user)
        }
        return yield* batch("a", "phone:x").pipe(Effect.flip)
      })
    )
    expect(result._tag === "Success" ? result.success : undefined).toMatchObject({
      _tag: "GasBudgetExhausted",
      budget: "user"
    })
  })

  it("charges payouts to their API key's budget, apart from the apps'", async () => {
    const anvil = network({ payoutCeiling: 100, perApiKey: 150 })
    const result = await run(
      Effect.gen(function* () {
        const policy = yield* SpendPolicy
        yield* policy.reserve(anvil, { kind: "payout", apiKey: "k1" }, 100n)
        yield* policy.reserve(anvil, { kind: "payout", apiKey: "k2" }, 100n)
        yield* policy.reserve(anvil, { kind: "batch", app: "k1", user: "u" }, 100n)
        return yield* policy.reserve(anvil, { kind: "payout", apiKey: "k1" }, 100n).pipe(Effect.flip)
      })
    )
    expect(result._tag === "Success" ? result.success : undefined).toMatchObject({
      _tag: "GasBudgetExhausted",
      budget: "api_key",
      retryAfterSeconds: expect.any(Number)
    })
  })

  it("counts an app's day budget in its own day window: refused 429 when full, given back with the rest", async () => {
    const anvil = network({ batchCeiling: 100, payoutCeiling: 100, perUser: 1000, perApp: 1000, perNetwork: 1000 })
    const payer = { kind: "batch", app: "a", user: "u", gasPerDay: 150 } as const
    const result = await run(
      Effect.gen(function* () {
        const policy = yield* SpendPolicy
        const hold = yield* policy.reserve(anvil, payer, 100n)
        const refused = yield* policy.reserve(anvil, payer, 100n).pipe(Effect.flip)
        const afterRefusal = { day: yield* policy.appGasToday(anvil, "a"), use: yield* policy.use(anvil) }
        // Another app, without a day budget, is not held back by this one's.
        yield* policy.reserve(anvil, { kind: "batch", app: "b", user: "u" }, 100n)
        yield* policy.release(hold)
        return { refused, afterRefusal, afterRelease: yield* policy.appGasToday(anvil, "a") }
      })
    )
    expect(result._tag === "Success" ? result.success : undefined).toMatchObject({
      refused: { _tag: "GasBudgetExhausted", budget: "app_day" },
      // The refused reservation left nothing behind: neither in the day window nor in the network's.
      afterRefusal: { day: 100, use: { networkGasUsed: 100 } },
      afterRelease: 0
    })
  })
})
