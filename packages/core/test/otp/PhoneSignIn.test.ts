import { assert, describe, it } from "@effect/vitest"
import {
  OtpPolicy,
  type OtpPolicyOptions,
  OtpStore,
  RateLimiter,
  SecureRandom,
  SigningKeys,
  UserStore
} from "@walletgate/core"
import { PhoneSignIn } from "@walletgate/core/otp"
import { SmsOutbox } from "@walletgate/core/testing"
import { Effect, Exit, Layer, Logger, References } from "effect"
import { TestClock } from "effect/testing"
import { decodeJwt } from "jose"

const PHONE = "+14155552671"
const OTHER = "+14169671111"

let outbox = new SmsOutbox()
const setup = (otp: OtpPolicyOptions = {}) => {
  outbox = new SmsOutbox()
  return PhoneSignIn.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        OtpPolicy.layer(otp),
        OtpStore.memory,
        UserStore.memory,
        RateLimiter.memory,
        SigningKeys.ephemeral({ issuer: "test" }),
        outbox.layer,
        SecureRandom.crypto
      )
    )
  )
}

const failureTag = <A, E extends { readonly _tag: string }>(exit: Exit.Exit<A, E>): string | undefined =>
  Exit.isFailure(exit)
    ? exit.cause.reasons.map((reason) => (reason._tag === "Fail" ? reason.error._tag : reason._tag))[0]
    : undefined

/** Sends a code and reads it from the outbox. */
const sendAndRead = (phone: string, ip = "192.0.2.1") =>
  Effect.gen(function* () {
    const signIn = yield* PhoneSignIn
    yield* signIn.sendCode(phone, ip)
    const code = outbox.latestCode(phone)
    assert.isDefined(code)
    return code as string
  })

const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0")

describe("PhoneSignIn", () => {
  it.effect("sends a 6-digit code and exchanges it for a user JWT", () =>
    Effect.gen(function* () {
      const signIn = yield* PhoneSignIn
      const sent = yield* signIn.sendCode("+1 (415) 555-2671", "192.0.2.1")
      assert.deepStrictEqual(sent, { expiresIn: 300, resendAfter: 60 })
      assert.strictEqual(outbox.messages.length, 1)
      assert.strictEqual(outbox.messages[0]?.to, PHONE)
      const code = outbox.latestCode(PHONE) as string
      assert.match(code, /^\d{6}$/)

      const session = yield* signIn.verifyCode(PHONE, code)
      assert.strictEqual(session.user.phone, PHONE)
      const claims = decodeJwt(session.accessToken)
      assert.strictEqual(claims.sub, session.user.id)
      assert.strictEqual(claims.aud, "walletgate:user")
      assert.strictEqual(claims.iss, "test")
      assert.strictEqual(claims.exp, session.expiresAt)
    }).pipe(Effect.provide(setup()))
  )

  it.effect("keeps one user id per phone forever", () =>
    Effect.gen(function* () {
      const signIn = yield* PhoneSignIn
      const first = yield* signIn.verifyCode(PHONE, yield* sendAndRead(PHONE))
      yield* TestClock.adjust("61 seconds")
      const second = yield* signIn.verifyCode(PHONE, yield* sendAndRead(PHONE))
      assert.strictEqual(first.user.id, second.user.id)
      const other = yield* signIn.verifyCode(OTHER, yield* sendAndRead(OTHER))
      assert.notStrictEqual(other.user.id, first.user.id)
    }).pipe(Effect.provide(setup()))
  )

  it.effect("a code is single-use", () =>
    Effect.gen(function* () {
      const signIn = yield* PhoneSignIn
      const code = yield* sendAndRead(PHONE)
      yield* signIn.verifyCode(PHONE, code)
      assert.strictEqual(failureTag(yield* Effect.exit(signIn.verifyCode(PHONE, code))), "OtpInvalid")
    }).pipe(Effect.provide(setup()))
  )

  it.effect("a code expires after its lifetime", () =>
    Effect.gen(function* () {
      const signIn = yield* PhoneSignIn
      const code = yield* sendAndRead(PHONE)
      yield* TestClock.adjust("300 seconds")
      assert.strictEqual(failureTag(yield* Effect.exit(signIn.verifyCode(PHONE, code))), "OtpInvalid")
    }).pipe(Effect.provide(setup()))
  )

  it.effect("is still valid just before expiry", () =>
    Effect.gen(function* () {
      const signIn = yield* PhoneSignIn
      const code = yield* sendAndRead(PHONE)
      yield* TestClock.adjust("299 seconds")
      const session = yield* signIn.verifyCode(PHONE, code)
      assert.strictEqual(session.user.phone, PHONE)
    }).pipe(Effect.provide(setup()))
  )

  it.effect("five wrong tries void the code, even the right one afterwards", () =>
    Effect.gen(function* () {
      const signIn = yield* PhoneSignIn
      const code = yield* sendAndRead(PHONE)
      for (let i = 0; i < 5; i++) {
        assert.strictEqual(failureTag(yield* Effect.exit(signIn.verifyCode(PHONE, wrong(code)))), "OtpInvalid")
      }
      assert.strictEqual(failureTag(yield* Effect.exit(signIn.verifyCode(PHONE, code))), "OtpInvalid")
    }).pipe(Effect.provide(setup()))
  )

  it.effect("four wrong tries still leave the right code usable", () =>
    Effect.gen(function* () {
      const signIn = yield* PhoneSignIn
      const code = yield* sendAndRead(PHONE)
      for (let i = 0; i < 4; i++) yield* Effect.exit(signIn.verifyCode(PHONE, wrong(code)))
      const session = yield* signIn.verifyCode(PHONE, code)
      assert.strictEqual(session.user.phone, PHONE)
    }).pipe(Effect.provide(setup()))
  )

  it.effect("a voided code still holds the resend interval", () =>
    Effect.gen(function* () {
      const signIn = yield* PhoneSignIn
      const code = yield* sendAndRead(PHONE)
      for (let i = 0; i < 5; i++) yield* Effect.exit(signIn.verifyCode(PHONE, wrong(code)))
      assert.strictEqual(failureTag(yield* Effect.exit(signIn.sendCode(PHONE, "192.0.2.1"))), "RateLimited")
    }).pipe(Effect.provide(setup()))
  )

  it.effect("refuses a resend within 60 s, with the seconds left; a resend voids the old code", () =>
    Effect.gen(function* () {
      const signIn = yield* PhoneSignIn
      const first = yield* sendAndRead(PHONE)
      yield* TestClock.adjust("45 seconds")
      const early = yield* Effect.flip(signIn.sendCode(PHONE, "192.0.2.1"))
      assert.strictEqual(early._tag, "RateLimited")
      assert.strictEqual(early._tag === "RateLimited" ? early.retryAfterSeconds : 0, 15)
      yield* TestClock.adjust("15 seconds")
      const second = yield* sendAndRead(PHONE)
      if (second !== first) {
        assert.strictEqual(failureTag(yield* Effect.exit(signIn.verifyCode(PHONE, first))), "OtpInvalid")
      }
      const session = yield* signIn.verifyCode(PHONE, second)
      assert.strictEqual(session.user.phone, PHONE)
    }).pipe(Effect.provide(setup()))
  )

  it.effect("caps sends per phone per hour", () =>
    Effect.gen(function* () {
      const signIn = yield* PhoneSignIn
      for (let i = 0; i < 3; i++) {
        yield* signIn.sendCode(PHONE, `192.0.2.${i}`)
        yield* TestClock.adjust("61 seconds")
      }
      const refused = yield* Effect.flip(signIn.sendCode(PHONE, "192.0.2.9"))
      assert.strictEqual(refused._tag, "RateLimited")
      yield* TestClock.adjust("1 hour")
      yield* signIn.sendCode(PHONE, "192.0.2.9")
    }).pipe(Effect.provide(setup({ sendsPerPhone: 3 })))
  )

  it.effect("caps sends per client IP per hour, across phones", () =>
    Effect.gen(function* () {
      const signIn = yield* PhoneSignIn
      yield* signIn.sendCode(PHONE, "198.51.100.7")
      yield* signIn.sendCode(OTHER, "198.51.100.7")
      const refused = yield* Effect.flip(signIn.sendCode("+12127363100", "198.51.100.7"))
      assert.strictEqual(refused._tag, "RateLimited")
      // The refused send left no code and no resend wait for that phone.
      yield* signIn.sendCode("+12127363100", "198.51.100.8")
    }).pipe(Effect.provide(setup({ sendsPerIpPerHour: 2 })))
  )

  it.effect("a send past the per-phone cap leaves the pending code valid", () =>
    Effect.gen(function* () {
      const signIn = yield* PhoneSignIn
      // The victim's send and the attacker's four resends (each a legitimate resend: it voids the code before).
      for (let i = 0; i < 5; i++) {
        yield* signIn.sendCode(PHONE, i === 0 ? "192.0.2.1" : `198.51.100.${i}`)
        yield* TestClock.adjust("61 seconds")
      }
      const pending = outbox.latestCode(PHONE) as string
      const refused = yield* Effect.flip(signIn.sendCode(PHONE, "198.51.100.9"))
      assert.strictEqual(refused._tag, "RateLimited")
      assert.strictEqual(outbox.messages.length, 5)
      const session = yield* signIn.verifyCode(PHONE, pending)
      assert.strictEqual(session.user.phone, PHONE)
    }).pipe(Effect.provide(setup()))
  )

  it.effect("a send past the per-IP cap leaves the victim's pending code valid", () =>
    Effect.gen(function* () {
      const signIn = yield* PhoneSignIn
      const pending = yield* sendAndRead(PHONE, "192.0.2.1")
      yield* signIn.sendCode(OTHER, "198.51.100.7")
      yield* TestClock.adjust("61 seconds")
      const refused = yield* Effect.flip(signIn.sendCode(PHONE, "198.51.100.7"))
      assert.strictEqual(refused._tag, "RateLimited")
      const session = yield* signIn.verifyCode(PHONE, pending)
      assert.strictEqual(session.user.phone, PHONE)
    }).pipe(Effect.provide(setup({ sendsPerIpPerHour: 1 })))
  )

  it.effect("an attacker who spends a phone's sends locks it out for at most its window (15 min)", () =>
    Effect.gen(function* () {
      const signIn = yield* PhoneSignIn
      for (let i = 0; i < 5; i++) {
        yield* signIn.sendCode(PHONE, `198.51.100.${i}`)
        yield* TestClock.adjust("61 seconds")
      }
      const refused = yield* Effect.flip(signIn.sendCode(PHONE, "192.0.2.1"))
      assert.strictEqual(refused._tag, "RateLimited")
      const retryAfter = refused._tag === "RateLimited" ? refused.retryAfterSeconds : 0
      assert.isAtMost(retryAfter, 15 * 60 - 5 * 61)
      yield* TestClock.adjust(`${retryAfter} seconds`)
      yield* signIn.sendCode(PHONE, "192.0.2.1")
    }).pipe(Effect.provide(setup()))
  )

  it.effect("a failed SMS leaves no usable code and no resend wait", () =>
    Effect.gen(function* () {
      const signIn = yield* PhoneSignIn
      outbox.failNext(1)
      const failed = yield* Effect.flip(signIn.sendCode(PHONE, "192.0.2.1"))
      assert.strictEqual(failed._tag, "SmsDeliveryFailed")
      const code = yield* sendAndRead(PHONE)
      const session = yield* signIn.verifyCode(PHONE, code)
      assert.strictEqual(session.user.phone, PHONE)
    }).pipe(Effect.provide(setup()))
  )

  it.effect("refuses invalid phones on both steps", () =>
    Effect.gen(function* () {
      const signIn = yield* PhoneSignIn
      assert.strictEqual(failureTag(yield* Effect.exit(signIn.sendCode("+44 20 7946 0958", undefined))), "InvalidPhone")
      assert.strictEqual(failureTag(yield* Effect.exit(signIn.verifyCode("+1 911 555 1234", "123456"))), "InvalidPhone")
    }).pipe(Effect.provide(setup()))
  )

  it.effect("answers an unknown phone exactly like a known one", () =>
    Effect.gen(function* () {
      const signIn = yield* PhoneSignIn
      yield* signIn.verifyCode(PHONE, yield* sendAndRead(PHONE))
      yield* TestClock.adjust("61 seconds")
      const known = yield* signIn.sendCode(PHONE, "192.0.2.1")
      const unknown = yield* signIn.sendCode(OTHER, "192.0.2.1")
      assert.deepStrictEqual(known, unknown)
      const knownWrong = yield* Effect.flip(signIn.verifyCode(PHONE, "000000"))
      const unknownWrong = yield* Effect.flip(signIn.verifyCode("+12127363100", "000000"))
      assert.deepStrictEqual(knownWrong, unknownWrong)
    }).pipe(Effect.provide(setup()))
  )

  it.effect("answers a known and an unknown phone past their caps alike", () =>
    Effect.gen(function* () {
      const signIn = yield* PhoneSignIn
      yield* signIn.verifyCode(PHONE, yield* sendAndRead(PHONE))
      yield* signIn.sendCode(OTHER, "192.0.2.2")
      yield* TestClock.adjust("61 seconds")
      const known = yield* Effect.flip(signIn.sendCode(PHONE, "192.0.2.3"))
      const unknown = yield* Effect.flip(signIn.sendCode(OTHER, "192.0.2.4"))
      assert.strictEqual(known._tag, "RateLimited")
      assert.deepStrictEqual(known, unknown)
    }).pipe(Effect.provide(setup({ sendsPerPhone: 1 })))
  )

  it.effect("test phones use their fixed code and send no SMS", () =>
    Effect.gen(function* () {
      const signIn = yield* PhoneSignIn
      yield* signIn.sendCode("+1 500 555 0006", "192.0.2.1")
      assert.strictEqual(outbox.messages.length, 0)
      assert.strictEqual(failureTag(yield* Effect.exit(signIn.verifyCode("+15005550006", "000000"))), "OtpInvalid")
      const session = yield* signIn.verifyCode("+15005550006", "424242")
      assert.strictEqual(session.user.phone, "+15005550006")
    }).pipe(Effect.provide(setup({ testPhones: { "+15005550006": "424242" } })))
  )

  it.effect("names every object inherits are not test phones", () =>
    Effect.gen(function* () {
      const signIn = yield* PhoneSignIn
      for (const name of ["toString", "__proto__", "constructor", "hasOwnProperty"]) {
        assert.strictEqual(failureTag(yield* Effect.exit(signIn.sendCode(name, "192.0.2.1"))), "InvalidPhone")
        assert.strictEqual(failureTag(yield* Effect.exit(signIn.verifyCode(name, "123456"))), "InvalidPhone")
      }
    }).pipe(Effect.provide(setup({ testPhones: { "+15005550006": "424242" } })))
  )

  it.effect("logs each step at Info with the phone masked, and nothing below the minimum level", () =>
    Effect.gen(function* () {
      const lines: Array<{ readonly message: string; readonly phone: unknown }> = []
      const logger = Logger.make((options) => {
        const annotations = options.fiber.getRef(References.CurrentLogAnnotations)
        // The ephemeral key's own warning, logged where it is first used (the verification signs the session).
        if (String(options.message).includes("ephemeral JWT signing key")) return
        lines.push({ message: String(options.message), phone: annotations.phone })
      })
      const signIn = yield* PhoneSignIn
      const logged = Effect.provide(Logger.layer([logger]))
      const code = yield* logged(sendAndRead(PHONE))
      yield* logged(signIn.verifyCode(PHONE, code))
      assert.deepStrictEqual(lines, [
        { message: "walletgate: sign-in code sent", phone: "***2671" },
        { message: "walletgate: phone verified", phone: "***2671" }
      ])
      yield* TestClock.adjust("61 seconds")
      yield* logged(sendAndRead(PHONE)).pipe(Effect.provideService(References.MinimumLogLevel, "Warn"))
      assert.strictEqual(lines.length, 2)
    }).pipe(Effect.provide(setup()))
  )

  it.effect("codes come from the injected random source", () =>
    Effect.gen(function* () {
      const signIn = yield* PhoneSignIn
      yield* signIn.sendCode(PHONE, "192.0.2.1")
      // 0x0001E240 = 123456
      assert.strictEqual(outbox.latestCode(PHONE), "123456")
    }).pipe(
      Effect.provide(
        PhoneSignIn.layer.pipe(
          Layer.provideMerge(
            Layer.mergeAll(
              OtpPolicy.layer({ codeSecret: "k" }),
              OtpStore.memory,
              UserStore.memory,
              RateLimiter.memory,
              SigningKeys.ephemeral({ issuer: "test" }),
              outbox.layer,
              Layer.succeed(
                SecureRandom,
                SecureRandom.of({
                  bytes: (n) =>
                    Effect.succeed(new Uint8Array([0, 1, 0xe2, 0x40, ...new Array(Math.max(0, n - 4)).fill(7)]))
                })
              )
            )
          )
        )
      )
    )
  )
})
