import { OtpStore, RateLimiter, UserStore } from "@walletgate/core"
import { otpStoreContract, rateLimiterContract, userStoreContract } from "@walletgate/core/testing"
import { Effect } from "effect"
import { describe, it } from "vitest"

// The in-memory ports against the port contracts; @walletgate/redis runs the same cases on Redis.
describe("OtpStore.memory", () => {
  for (const { name, run } of otpStoreContract) it(name, () => Effect.runPromise(Effect.provide(run, OtpStore.memory)))
})

describe("UserStore.memory", () => {
  for (const { name, run } of userStoreContract)
    it(name, () => Effect.runPromise(Effect.provide(run, UserStore.memory)))
})

describe("RateLimiter.memory", () => {
  for (const { name, run } of rateLimiterContract) {
    it(name, () => Effect.runPromise(Effect.provide(run, RateLimiter.memory)))
  }
})
