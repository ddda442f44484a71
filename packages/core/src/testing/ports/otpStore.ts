import * as Effect from "effect/Effect"
import { PhoneE164 } from "../../auth/phone"
import { OtpStore, type PendingCode } from "../../otp/OtpStore"
import { concurrently, countOf, expectEqual, type PortContractCase, T0 } from "./contract"

const PHONE = PhoneE164.make("+14155552671")
const OTHER = PhoneE164.make("+14169671111")
/** Stand-ins for code HMACs: 64 hex digits, as `PhoneSignIn` stores them. */
const digest = (n: number) => n.toString(16).padStart(64, "0")
const RIGHT = digest(1)
const WRONG = digest(2)
const NEWER = digest(3)
const TTL = 300_000
const RESEND = 60_000
const ATTEMPTS = 5

const pending = (codeHash: string, at = T0, lifetimes: { ttl?: number; resend?: number } = {}): PendingCode => ({
  codeHash,
  expiresAt: at + (lifetimes.ttl ?? TTL),
  resendAt: at + (lifetimes.resend ?? RESEND)
})
const ISSUED = { _tag: "Issued" } as const
const HELD = { _tag: "Held" } as const
const tooSoon = (retryAfterMs: number) => ({ _tag: "ResendTooSoon", retryAfterMs }) as const

const wrongTries = (store: OtpStore["Service"], phone: PhoneE164, count: number, now: number, maxAttempts = ATTEMPTS) =>
  Effect.forEach(Array.from({ length: count }), () => store.consume(phone, WRONG, now, maxAttempts))

const otpCase = (name: string, run: (store: OtpStore["Service"]) => Effect.Effect<void, unknown>) => ({
  name,
  run: OtpStore.use(run)
})

/** The contract of `OtpStore` (docs/security.md): every implementation must pass every case. */
export const otpStoreContract: ReadonlyArray<PortContractCase<OtpStore>> = [
  otpCase("issues a code to a phone without one, and accepts it exactly once", (store) =>
    Effect.gen(function* () {
      yield* expectEqual("issue", yield* store.issue(PHONE, pending(RIGHT), T0), ISSUED)
      yield* expectEqual("first use", yield* store.consume(PHONE, RIGHT, T0 + 1, ATTEMPTS), "Accepted")
      yield* expectEqual("second use", yield* store.consume(PHONE, RIGHT, T0 + 2, ATTEMPTS), "Rejected")
    })
  ),
  otpCase("rejects any code for a phone that has none", (store) =>
    Effect.gen(function* () {
      yield* expectEqual("consume", yield* store.consume(PHONE, RIGHT, T0, ATTEMPTS), "Rejected")
    })
  ),
  otpCase("counts wrong codes but keeps the right one usable below maxAttempts", (store) =>
    Effect.gen(function* () {
      yield* store.issue(PHONE, pending(RIGHT), T0)
      const outcomes = yield* wrongTries(store, PHONE, ATTEMPTS - 1, T0 + 1)
      yield* expectEqual("wrong codes", outcomes, new Array(ATTEMPTS - 1).fill("Rejected"))
      yield* expectEqual("right code", yield* store.consume(PHONE, RIGHT, T0 + 2, ATTEMPTS), "Accepted")
    })
  ),
  otpCase("voids the code at the maxAttempts-th wrong try", (store) =>
    Effect.gen(function* () {
      yield* store.issue(PHONE, pending(RIGHT), T0)
      yield* wrongTries(store, PHONE, ATTEMPTS, T0 + 1)
      yield* expectEqual("right code after voiding", yield* store.consume(PHONE, RIGHT, T0 + 2, ATTEMPTS), "Rejected")
    })
  ),
  otpCase("voids the code at the first wrong try when maxAttempts is 1", (store) =>
    Effect.gen(function* () {
      yield* store.issue(PHONE, pending(RIGHT), T0)
      yield* wrongTries(store, PHONE, 1, T0 + 1, 1)
      yield* expectEqual("right code", yield* store.consume(PHONE, RIGHT, T0 + 2, 1), "Rejected")
    })
  ),
  otpCase("keeps the resend time of a voided code", (store) =>
    Effect.gen(function* () {
      yield* store.issue(PHONE, pending(RIGHT), T0)
      yield* wrongTries(store, PHONE, ATTEMPTS, T0 + 1)
      yield* expectEqual(
        "issue before resendAt",
        yield* store.issue(PHONE, pending(NEWER, T0 + RESEND - 1), T0 + RESEND - 1),
        tooSoon(1)
      )
      yield* expectEqual(
        "issue at resendAt",
        yield* store.issue(PHONE, pending(NEWER, T0 + RESEND), T0 + RESEND),
        ISSUED
      )
      yield* expectEqual("new code", yield* store.consume(PHONE, NEWER, T0 + RESEND + 1, ATTEMPTS), "Accepted")
    })
  ),
  otpCase("refuses a new code before the resend time, says how long to wait, and keeps the pending one", (store) =>
    Effect.gen(function* () {
      yield* store.issue(PHONE, pending(RIGHT), T0)
      const again = yield* store.issue(PHONE, pending(NEWER, T0 + 10_000), T0 + 10_000)
      yield* expectEqual("second issue", again, tooSoon(RESEND - 10_000))
      yield* expectEqual("refused code", yield* store.consume(PHONE, NEWER, T0 + 10_001, ATTEMPTS), "Rejected")
      yield* expectEqual("pending code", yield* store.consume(PHONE, RIGHT, T0 + 10_002, ATTEMPTS), "Accepted")
    })
  ),
  otpCase("holds a new code beside a usable one from the resend time on; activating it voids the old one", (store) =>
    Effect.gen(function* () {
      yield* store.issue(PHONE, pending(RIGHT), T0)
      yield* expectEqual("resend", yield* store.issue(PHONE, pending(NEWER, T0 + RESEND), T0 + RESEND), HELD)
      yield* store.activate(PHONE, NEWER)
      yield* expectEqual("old code", yield* store.consume(PHONE, RIGHT, T0 + RESEND + 1, ATTEMPTS), "Rejected")
      yield* expectEqual("new code", yield* store.consume(PHONE, NEWER, T0 + RESEND + 2, ATTEMPTS), "Accepted")
    })
  ),
  otpCase("keeps the usable code, and only it, usable while a new one is held", (store) =>
    Effect.gen(function* () {
      yield* store.issue(PHONE, pending(RIGHT), T0)
      yield* store.issue(OTHER, pending(RIGHT), T0)
      yield* store.issue(PHONE, pending(NEWER, T0 + RESEND), T0 + RESEND)
      yield* store.issue(OTHER, pending(NEWER, T0 + RESEND), T0 + RESEND)
      yield* expectEqual("held code", yield* store.consume(PHONE, NEWER, T0 + RESEND + 1, ATTEMPTS), "Rejected")
      yield* expectEqual("usable code", yield* store.consume(OTHER, RIGHT, T0 + RESEND + 1, ATTEMPTS), "Accepted")
    })
  ),
  otpCase("holds the held code's resend time: no third code before it", (store) =>
    Effect.gen(function* () {
      yield* store.issue(PHONE, pending(RIGHT), T0)
      yield* store.issue(PHONE, pending(NEWER, T0 + RESEND), T0 + RESEND)
      const third = yield* store.issue(PHONE, pending(WRONG, T0 + RESEND + 1), T0 + RESEND + 1)
      yield* expectEqual("third", third, tooSoon(RESEND - 1))
    })
  ),
  otpCase("withdraws a held code: the usable one stays usable and its resend time comes back", (store) =>
    Effect.gen(function* () {
      yield* store.issue(PHONE, pending(RIGHT), T0)
      yield* store.issue(PHONE, pending(NEWER, T0 + RESEND), T0 + RESEND)
      yield* store.withdraw(PHONE, NEWER)
      yield* store.activate(PHONE, NEWER)
      yield* expectEqual("withdrawn code", yield* store.consume(PHONE, NEWER, T0 + RESEND + 1, ATTEMPTS), "Rejected")
      const again = yield* store.issue(PHONE, pending(digest(9), T0 + RESEND + 2), T0 + RESEND + 2)
      yield* expectEqual("a new code at once", again, HELD)
      yield* expectEqual("usable code", yield* store.consume(PHONE, RIGHT, T0 + RESEND + 3, ATTEMPTS), "Accepted")
    })
  ),
  otpCase("activates nothing for a hash that is not held", (store) =>
    Effect.gen(function* () {
      yield* store.issue(PHONE, pending(RIGHT), T0)
      yield* store.issue(PHONE, pending(NEWER, T0 + RESEND), T0 + RESEND)
      yield* store.activate(PHONE, WRONG)
      yield* store.activate(OTHER, NEWER)
      yield* expectEqual("usable code", yield* store.consume(PHONE, RIGHT, T0 + RESEND + 1, ATTEMPTS), "Accepted")
    })
  ),
  otpCase("issues at once, nothing held, when the earlier code is voided or expired", (store) =>
    Effect.gen(function* () {
      yield* store.issue(PHONE, pending(RIGHT), T0)
      yield* wrongTries(store, PHONE, ATTEMPTS, T0 + 1)
      yield* expectEqual("after voiding", yield* store.issue(PHONE, pending(NEWER, T0 + RESEND), T0 + RESEND), ISSUED)
      yield* expectEqual("new code", yield* store.consume(PHONE, NEWER, T0 + RESEND + 1, ATTEMPTS), "Accepted")
      yield* store.issue(OTHER, pending(RIGHT, T0, { ttl: RESEND, resend: RESEND }), T0)
      yield* expectEqual("after expiry", yield* store.issue(OTHER, pending(NEWER, T0 + RESEND), T0 + RESEND), ISSUED)
    })
  ),
  otpCase("ends a held code with the usable one when that one is accepted", (store) =>
    Effect.gen(function* () {
      yield* store.issue(PHONE, pending(RIGHT), T0)
      yield* store.issue(PHONE, pending(NEWER, T0 + RESEND), T0 + RESEND)
      yield* expectEqual("usable code", yield* store.consume(PHONE, RIGHT, T0 + RESEND + 1, ATTEMPTS), "Accepted")
      yield* store.activate(PHONE, NEWER)
      yield* expectEqual("held code", yield* store.consume(PHONE, NEWER, T0 + RESEND + 2, ATTEMPTS), "Rejected")
      yield* expectEqual("issue", yield* store.issue(PHONE, pending(WRONG, T0 + RESEND + 3), T0 + RESEND + 3), ISSUED)
    })
  ),
  otpCase("starts a new code with no failed attempts", (store) =>
    Effect.gen(function* () {
      yield* store.issue(PHONE, pending(RIGHT), T0)
      yield* wrongTries(store, PHONE, ATTEMPTS - 1, T0 + 1)
      yield* store.issue(PHONE, pending(NEWER, T0 + RESEND), T0 + RESEND)
      yield* store.activate(PHONE, NEWER)
      yield* wrongTries(store, PHONE, ATTEMPTS - 1, T0 + RESEND + 1)
      yield* expectEqual("new code", yield* store.consume(PHONE, NEWER, T0 + RESEND + 2, ATTEMPTS), "Accepted")
    })
  ),
  otpCase("rejects a code from the instant it expires", (store) =>
    Effect.gen(function* () {
      yield* store.issue(PHONE, pending(RIGHT), T0)
      yield* store.issue(OTHER, pending(RIGHT), T0)
      yield* expectEqual("just before expiry", yield* store.consume(PHONE, RIGHT, T0 + TTL - 1, ATTEMPTS), "Accepted")
      yield* expectEqual("at expiry", yield* store.consume(OTHER, RIGHT, T0 + TTL, ATTEMPTS), "Rejected")
    })
  ),
  otpCase("keeps the resend time of an expired code when it is later than the expiry", (store) =>
    Effect.gen(function* () {
      yield* store.issue(PHONE, pending(RIGHT, T0, { ttl: 60_000, resend: 120_000 }), T0)
      yield* expectEqual("after expiry", yield* store.consume(PHONE, RIGHT, T0 + 60_000, ATTEMPTS), "Rejected")
      yield* expectEqual("issue", yield* store.issue(PHONE, pending(NEWER, T0 + 90_000), T0 + 90_000), tooSoon(30_000))
      yield* expectEqual(
        "issue at resendAt",
        yield* store.issue(PHONE, pending(NEWER, T0 + 120_000), T0 + 120_000),
        ISSUED
      )
    })
  ),
  otpCase("allows a new code once both the expiry and the resend time have passed", (store) =>
    Effect.gen(function* () {
      yield* store.issue(PHONE, pending(RIGHT), T0)
      yield* expectEqual("issue much later", yield* store.issue(PHONE, pending(NEWER, T0 + TTL), T0 + TTL), ISSUED)
      yield* expectEqual("old code", yield* store.consume(PHONE, RIGHT, T0 + TTL + 1, ATTEMPTS), "Rejected")
      yield* expectEqual("new code", yield* store.consume(PHONE, NEWER, T0 + TTL + 2, ATTEMPTS), "Accepted")
    })
  ),
  otpCase("withdraws the pending code when the hash matches, and its resend wait with it", (store) =>
    Effect.gen(function* () {
      yield* store.issue(PHONE, pending(RIGHT), T0)
      yield* store.withdraw(PHONE, RIGHT)
      yield* expectEqual("issue after withdraw", yield* store.issue(PHONE, pending(NEWER, T0 + 1), T0 + 1), ISSUED)
      yield* expectEqual("withdrawn code", yield* store.consume(PHONE, RIGHT, T0 + 2, ATTEMPTS), "Rejected")
      yield* expectEqual("new code", yield* store.consume(PHONE, NEWER, T0 + 3, ATTEMPTS), "Accepted")
    })
  ),
  otpCase("leaves the pending code alone when withdrawing another hash", (store) =>
    Effect.gen(function* () {
      yield* store.issue(PHONE, pending(RIGHT), T0)
      yield* store.withdraw(PHONE, WRONG)
      yield* expectEqual("issue", yield* store.issue(PHONE, pending(NEWER, T0 + 1), T0 + 1), tooSoon(RESEND - 1))
      yield* expectEqual("pending code", yield* store.consume(PHONE, RIGHT, T0 + 2, ATTEMPTS), "Accepted")
    })
  ),
  otpCase("leaves a newer code alone when withdrawing the code it replaced", (store) =>
    Effect.gen(function* () {
      yield* store.issue(PHONE, pending(RIGHT), T0)
      yield* store.issue(PHONE, pending(NEWER, T0 + RESEND), T0 + RESEND)
      yield* store.activate(PHONE, NEWER)
      yield* store.withdraw(PHONE, RIGHT)
      yield* expectEqual("newer code", yield* store.consume(PHONE, NEWER, T0 + RESEND + 1, ATTEMPTS), "Accepted")
    })
  ),
  otpCase("does nothing when withdrawing from a phone without a code", (store) =>
    Effect.gen(function* () {
      yield* store.withdraw(PHONE, RIGHT)
      yield* expectEqual("issue", yield* store.issue(PHONE, pending(RIGHT), T0), ISSUED)
    })
  ),
  otpCase("keeps phones apart", (store) =>
    Effect.gen(function* () {
      yield* store.issue(PHONE, pending(RIGHT), T0)
      yield* expectEqual("other phone", yield* store.issue(OTHER, pending(NEWER), T0), ISSUED)
      yield* wrongTries(store, PHONE, ATTEMPTS, T0 + 1)
      yield* expectEqual("code of the other phone", yield* store.consume(PHONE, NEWER, T0 + 2, ATTEMPTS), "Rejected")
      yield* expectEqual("other phone's code", yield* store.consume(OTHER, NEWER, T0 + 3, ATTEMPTS), "Accepted")
    })
  ),
  otpCase("accepts exactly one of 50 concurrent checks of the right code", (store) =>
    Effect.gen(function* () {
      yield* store.issue(PHONE, pending(RIGHT), T0)
      const outcomes = yield* concurrently(50, () => store.consume(PHONE, RIGHT, T0 + 1, ATTEMPTS))
      yield* expectEqual("accepted", countOf(outcomes, "Accepted"), 1)
    })
  ),
  otpCase("issues exactly one of 20 concurrent codes for one phone", (store) =>
    Effect.gen(function* () {
      const outcomes = yield* concurrently(20, (i) => store.issue(PHONE, pending(digest(100 + i)), T0))
      yield* expectEqual("issued", countOf(outcomes, ISSUED), 1)
      yield* expectEqual("refused", countOf(outcomes, tooSoon(RESEND)), 19)
    })
  ),
  otpCase("counts every one of 50 concurrent wrong codes", (store) =>
    Effect.gen(function* () {
      yield* store.issue(PHONE, pending(RIGHT), T0)
      yield* store.issue(OTHER, pending(RIGHT), T0)
      yield* concurrently(50, () => store.consume(PHONE, WRONG, T0 + 1, 50))
      yield* concurrently(50, () => store.consume(OTHER, WRONG, T0 + 1, 51))
      yield* expectEqual("after 50 of 50 tries", yield* store.consume(PHONE, RIGHT, T0 + 2, 50), "Rejected")
      yield* expectEqual("after 50 of 51 tries", yield* store.consume(OTHER, RIGHT, T0 + 2, 51), "Accepted")
    })
  ),
  otpCase("accepts at most one of concurrent right and wrong checks", (store) =>
    Effect.gen(function* () {
      yield* store.issue(PHONE, pending(RIGHT), T0)
      const outcomes = yield* concurrently(40, (i) =>
        store.consume(PHONE, i % 2 === 0 ? WRONG : RIGHT, T0 + 1, ATTEMPTS)
      )
      const accepted = countOf(outcomes, "Accepted")
      yield* expectEqual("at most one accepted", accepted <= 1, true)
      yield* expectEqual("used afterwards", yield* store.consume(PHONE, RIGHT, T0 + 2, ATTEMPTS), "Rejected")
    })
  )
]
