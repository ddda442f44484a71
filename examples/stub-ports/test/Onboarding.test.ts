import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { Onboarding } from "../src/Onboarding.ts"
import { stubPorts } from "./stubPorts.ts"

const PHONE = "+14155552671"
const IP = "192.0.2.1"

describe("Onboarding, on stub ports", () => {
  it.effect("texts a code, and makes a profile at the first sign-in only", () => {
    const { outbox, layer } = stubPorts()
    return Effect.gen(function* () {
      const onboarding = yield* Onboarding
      yield* onboarding.start("+1 (415) 555-2671", IP)
      assert.deepStrictEqual(
        outbox.messages.map((message) => message.to),
        [PHONE]
      )
      const first = yield* onboarding.finish(PHONE, outbox.latestCode(PHONE) ?? "", "Ada")
      assert.isTrue(first.firstSignIn)
      assert.strictEqual(first.profile.displayName, "Ada")

      yield* TestClock.adjust("1 minute")
      yield* onboarding.start(PHONE, IP)
      const again = yield* onboarding.finish(PHONE, outbox.latestCode(PHONE) ?? "", "Someone else")
      assert.isFalse(again.firstSignIn)
      assert.deepStrictEqual(again.profile, first.profile)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a code works until 5 minutes have passed, and not after", () => {
    const { outbox, layer } = stubPorts()
    return Effect.gen(function* () {
      const onboarding = yield* Onboarding
      yield* onboarding.start(PHONE, IP)
      yield* TestClock.adjust("299 seconds")
      yield* onboarding.finish(PHONE, outbox.latestCode(PHONE) ?? "", "Ada")

      const other = "+14169671111"
      yield* onboarding.start(other, IP)
      yield* TestClock.adjust("5 minutes")
      const error = yield* Effect.flip(onboarding.finish(other, outbox.latestCode(other) ?? "", "Bob"))
      assert.strictEqual(error._tag, "OtpInvalid")
    }).pipe(Effect.provide(layer))
  })

  it.effect("a second code within 60 s is refused with the wait; the next one voids the first", () => {
    const { outbox, layer } = stubPorts()
    return Effect.gen(function* () {
      const onboarding = yield* Onboarding
      yield* onboarding.start(PHONE, IP)
      const first = outbox.latestCode(PHONE) ?? ""
      yield* TestClock.adjust("45 seconds")
      const tooSoon = yield* Effect.flip(onboarding.start(PHONE, IP))
      assert.deepStrictEqual(tooSoon._tag === "RateLimited" && tooSoon.retryAfterSeconds, 15)

      yield* TestClock.adjust("15 seconds")
      yield* onboarding.start(PHONE, IP)
      const second = outbox.latestCode(PHONE) ?? ""
      assert.notStrictEqual(second, first)
      const voided = yield* Effect.flip(onboarding.finish(PHONE, first, "Ada"))
      assert.strictEqual(voided._tag, "OtpInvalid")
      yield* onboarding.finish(PHONE, second, "Ada")
    }).pipe(Effect.provide(layer))
  })

  it.effect("caps codes per phone per window, then waits for the next window", () => {
    const { layer } = stubPorts({ sendsPerPhone: 3 })
    return Effect.gen(function* () {
      const onboarding = yield* Onboarding
      for (let sent = 0; sent < 3; sent++) {
        yield* onboarding.start(PHONE, IP)
        yield* TestClock.adjust("1 minute")
      }
      const capped = yield* Effect.flip(onboarding.start(PHONE, IP))
      assert.strictEqual(capped._tag, "RateLimited")
      const wait = capped._tag === "RateLimited" ? capped.retryAfterSeconds : 0
      assert.isAbove(wait, 60)

      yield* TestClock.adjust(`${wait} seconds`)
      yield* onboarding.start(PHONE, IP)
    }).pipe(Effect.provide(layer))
  })

  it.effect("an SMS outage leaves nothing behind: no usable code, no wait before the retry", () => {
    const { outbox, layer } = stubPorts()
    return Effect.gen(function* () {
      const onboarding = yield* Onboarding
      outbox.failNext(1)
      const outage = yield* Effect.flip(onboarding.start(PHONE, IP))
      assert.strictEqual(outage._tag, "SmsDeliveryFailed")
      assert.lengthOf(outbox.messages, 0)

      yield* onboarding.start(PHONE, IP)
      const signedIn = yield* onboarding.finish(PHONE, outbox.latestCode(PHONE) ?? "", "Ada")
      assert.isTrue(signedIn.firstSignIn)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a wrong code makes no profile, and five wrong tries void the right one", () => {
    const { outbox, layer } = stubPorts()
    return Effect.gen(function* () {
      const onboarding = yield* Onboarding
      yield* onboarding.start(PHONE, IP)
      const code = outbox.latestCode(PHONE) ?? ""
      const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, "0")
      for (let tries = 0; tries < 5; tries++) {
        const error = yield* Effect.flip(onboarding.finish(PHONE, wrong, "Ada"))
        assert.strictEqual(error._tag, "OtpInvalid")
      }
      const voided = yield* Effect.flip(onboarding.finish(PHONE, code, "Ada"))
      assert.strictEqual(voided._tag, "OtpInvalid")

      yield* TestClock.adjust("1 minute")
      yield* onboarding.start(PHONE, IP)
      const signedIn = yield* onboarding.finish(PHONE, outbox.latestCode(PHONE) ?? "", "Ada")
      assert.isTrue(signedIn.firstSignIn)
    }).pipe(Effect.provide(layer))
  })
})
