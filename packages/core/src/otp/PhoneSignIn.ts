import { createHmac, createSecretKey } from "node:crypto"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SigningKeys } from "../auth/SigningKeys"
import { USER_TOKEN_AUDIENCE, USER_TOKEN_TYPE } from "../auth/tokens"
import { type User, UserId, UserStore } from "../auth/UserStore"
import { currentMoment } from "../internal/logging"
import { randomDigits, randomUuid, SecureRandom } from "../random/SecureRandom"
import { RateLimiter } from "../ratelimit/RateLimiter"
import type { StoreUnavailable } from "../state/errors"
import { type InvalidPhone, OtpInvalid, RateLimited, SmsDeliveryFailed } from "./errors"
import { OtpStore } from "./OtpStore"
import { maskPhone, type PhoneE164, parsePhone } from "./phone"
import { OtpPolicy } from "./policy"
import { SmsSender } from "./SmsSender"

/** What `sendCode` tells the caller. */
export interface CodeSent {
  readonly expiresIn: number
  readonly resendAfter: number
}

/** What a successful `verifyCode` yields: a user JWT for the phone's user. */
export interface Session {
  readonly accessToken: string
  readonly expiresIn: number
  readonly expiresAt: number
  readonly user: User
}

const HOUR_MS = 3_600_000

/**
 * Native phone sign-in (SPEC §4.1, §4.2, §5.1): a 6-digit code by SMS, exchanged for a user JWT.
 * Answers never reveal whether a phone is known.
 */
export class PhoneSignIn extends Context.Service<
  PhoneSignIn,
  {
    /** Sends a fresh code to `phone`, within the resend interval and the hourly caps. */
    readonly sendCode: (
      phone: string,
      clientIp: string | undefined
    ) => Effect.Effect<CodeSent, InvalidPhone | RateLimited | SmsDeliveryFailed | StoreUnavailable>
    /** Exchanges the code for a session; the first success creates the phone's user. */
    readonly verifyCode: (
      phone: string,
      code: string
    ) => Effect.Effect<Session, InvalidPhone | OtpInvalid | StoreUnavailable>
  }
>()("@walletgate/core/PhoneSignIn") {
  /** The service over its ports: `OtpStore`, `SmsSender`, `RateLimiter`, `UserStore`, `SigningKeys`. */
  static readonly layer = Layer.effect(
    PhoneSignIn,
    Effect.gen(function* () {
      const policy = yield* OtpPolicy
      const store = yield* OtpStore
      const sms = yield* SmsSender
      const limiter = yield* RateLimiter
      const users = yield* UserStore
      const keys = yield* SigningKeys
      const random = yield* SecureRandom
      const secret = policy.codeSecret ?? Buffer.from(yield* random.bytes(32)).toString("hex")
      // Prepared once: a string key would be turned into a key object again for every code.
      const secretKey = createSecretKey(Buffer.from(secret, "utf8"))
      const withRandom = Effect.provideService(SecureRandom, random)
      const hashCode = (phone: PhoneE164, code: string) =>
        createHmac("sha256", secretKey).update(`${phone}:${code}`).digest("hex")

      // Configured test numbers skip the NANP rules (they are often fictional 555 numbers) but nothing else.
      const testPhoneOf = (input: string) => policy.testPhones.get(input.replace(/[\s\-().]/g, ""))

      const sendCode = Effect.fnUntraced(function* (input: string, clientIp: string | undefined) {
        const test = testPhoneOf(input)
        const phone = test?.phone ?? (yield* parsePhone(input, policy.regions))
        const { now, logsInfo } = yield* currentMoment
        const code = test?.code ?? (yield* withRandom(randomDigits(6)))
        const codeHash = hashCode(phone, code)
        const issued = yield* store.issue(
          phone,
          {
            codeHash,
            expiresAt: now + policy.codeTtlSeconds * 1000,
            resendAt: now + policy.resendIntervalSeconds * 1000
          },
          now
        )
        if (issued._tag === "ResendTooSoon") return yield* rateLimited(issued.retryAfterMs)

        const phoneLimit = { key: `otp:send:phone:${phone}`, limit: policy.sendsPerPhonePerHour }
        const limited = yield* limiter.consume(
          clientIp === undefined
            ? [phoneLimit]
            : [phoneLimit, { key: `otp:send:ip:${clientIp}`, limit: policy.sendsPerIpPerHour }],
          HOUR_MS,
          now
        )
        if (!limited.allowed) {
          yield* store.withdraw(phone, codeHash)
          return yield* rateLimited(limited.retryAfterMs)
        }

        if (test === undefined) {
          const text = policy.message(code, Math.ceil(policy.codeTtlSeconds / 60))
          // A failed SMS leaves no usable code and no resend wait behind.
          yield* sms.send(phone, text).pipe(
            Effect.timeoutOrElse({
              duration: Duration.seconds(policy.smsTimeoutSeconds),
              orElse: () => Effect.fail(new SmsDeliveryFailed({ cause: "the SMS sender did not answer in time" }))
            }),
            Effect.tapError((error) =>
              Effect.logWarning("walletgate: SMS delivery failed").pipe(
                Effect.annotateLogs({ phone: maskPhone(phone), cause: error.cause }),
                Effect.andThen(store.withdraw(phone, codeHash))
              )
            )
          )
        }
        if (logsInfo) {
          yield* Effect.logInfo("walletgate: sign-in code sent").pipe(Effect.annotateLogs({ phone: maskPhone(phone) }))
        }
        return { expiresIn: policy.codeTtlSeconds, resendAfter: policy.resendIntervalSeconds }
      })

      const verifyCode = Effect.fnUntraced(function* (input: string, code: string) {
        const phone = testPhoneOf(input)?.phone ?? (yield* parsePhone(input, policy.regions))
        const { now, logsInfo } = yield* currentMoment
        const outcome = yield* store.consume(phone, hashCode(phone, code), now, policy.maxAttempts)
        if (outcome === "Rejected") return yield* new OtpInvalid()
        const id = UserId.make(yield* withRandom(randomUuid))
        const user = yield* users.findOrCreate({ id, phone, createdAt: now })
        const { token, expiresAt } = yield* keys.sign({
          subject: user.id,
          audience: USER_TOKEN_AUDIENCE,
          type: USER_TOKEN_TYPE,
          ttlSeconds: policy.sessionTtlSeconds,
          extra: { phone_number: user.phone }
        })
        if (logsInfo) {
          yield* Effect.logInfo("walletgate: phone verified").pipe(Effect.annotateLogs({ phone: maskPhone(phone) }))
        }
        return { accessToken: token, expiresIn: policy.sessionTtlSeconds, expiresAt, user }
      })

      return PhoneSignIn.of({ sendCode, verifyCode })
    })
  )
}

const rateLimited = (retryAfterMs: number) =>
  Effect.fail(new RateLimited({ retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)) }))
