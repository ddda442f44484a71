import { createHmac, createSecretKey } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { compactPhone, maskPhone, type PhoneE164, parsePhone } from "../auth/phone"
import { SigningKeys } from "../auth/SigningKeys"
import { USER_TOKEN_AUDIENCE, USER_TOKEN_TYPE } from "../auth/tokens"
import { count, rateLimited, signInFailed, signInVerified, smsSent } from "../internal/telemetry"
import { randomDigits, randomUuid, SecureRandom } from "../random/SecureRandom"
import { clientGroupOf, UNKNOWN_CLIENT } from "../state/clientGroup"
import type { StoreUnavailable } from "../state/errors"
import { type RateLimited, rateLimitedAfter } from "../state/errors"
import { type RateLimit, RateLimiter } from "../state/RateLimiter"
import { ChallengeRequired, type InvalidPhone, OtpInvalid, SmsDeliveryFailed } from "./errors"
import { OtpStore } from "./OtpStore"
import { OtpPolicy } from "./policy"
import { SignInChallenge } from "./SignInChallenge"
import { SmsSender } from "./SmsSender"
import { type User, UserId, UserStore } from "./UserStore"

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
/** The key of the deployment-wide hourly send ceiling. */
const CEILING_KEY = "otp:send:all"

/**
 * Native phone sign-in (SPEC §4.1, §4.2, §5.1): a 6-digit code by SMS, exchanged for a user JWT.
 * Answers never reveal whether a phone is known.
 */
export class PhoneSignIn extends Context.Service<
  PhoneSignIn,
  {
    /**
     * Sends a fresh code to `phone`, within the resend interval and the caps (per phone, per client, per NPA-NXX,
     * deployment-wide), after the `SignInChallenge`, if one is provided, accepted `challenge`.
     */
    readonly sendCode: (
      phone: string,
      clientIp: string | undefined,
      challenge?: string
    ) => Effect.Effect<CodeSent, InvalidPhone | ChallengeRequired | RateLimited | SmsDeliveryFailed | StoreUnavailable>
    /** Exchanges the code for a session; the first success creates the phone's user. */
    readonly verifyCode: (
      phone: string,
      code: string
    ) => Effect.Effect<Session, InvalidPhone | OtpInvalid | StoreUnavailable>
  }
>()("@walletgate/core/PhoneSignIn") {
  /**
   * The service over its ports: `OtpStore`, `SmsSender`, `RateLimiter`, `UserStore`, `SigningKeys`, and the
   * optional `SignInChallenge` (read once, when the layer is built).
   */
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
      const challenge = Option.getOrUndefined(yield* Effect.serviceOption(SignInChallenge))
      const secret = policy.codeSecret ?? Buffer.from(yield* random.bytes(32)).toString("hex")
      // Prepared once: a string key would be turned into a key object again for every code.
      const secretKey = createSecretKey(Buffer.from(secret, "utf8"))
      const withRandom = Effect.provideService(SecureRandom, random)
      const hashCode = (phone: PhoneE164, code: string) =>
        createHmac("sha256", secretKey).update(`${phone}:${code}`).digest("hex")

      // Configured test numbers skip the NANP rules (they are often fictional 555 numbers) but nothing else.
      const testPhoneOf = (input: string) => policy.testPhones.get(compactPhone(input))

      const phoneWindowMs = policy.phoneWindowSeconds * 1000
      /** The limits a send counts against, all or none (one scope, `otp`): see docs/security.md for the order. */
      const limitsOf = (phone: PhoneE164, client: string, test: boolean): readonly [RateLimit, ...Array<RateLimit>] => {
        const own: readonly [RateLimit, RateLimit] = [
          { key: `otp:send:ip:${client}`, limit: policy.sendsPerIpPerHour, windowMs: HOUR_MS },
          { key: `otp:send:phone:${phone}`, limit: policy.sendsPerPhone, windowMs: phoneWindowMs }
        ]
        // A test phone sends no SMS, so it costs nothing the prefix and global caps protect.
        if (test) return own
        return [
          ...own,
          { key: `otp:send:prefix:${phone.slice(2, 8)}`, limit: policy.sendsPerPrefixPerHour, windowMs: HOUR_MS },
          { key: CEILING_KEY, limit: policy.globalSendsPerHour, windowMs: HOUR_MS }
        ]
      }
      // Warnings for the operator, once per process (unknown addresses) and once per window (the ceiling).
      let unknownClientWarned = false
      let ceilingWarnedUntil = 0

      const sendCode = Effect.fnUntraced(function* (input: string, clientIp: string | undefined, answer?: string) {
        const test = testPhoneOf(input)
        const phone = test?.phone ?? (yield* parsePhone(input, policy.regions))
        // Before any state: a send without a good answer uses up no one's resend wait or budget.
        if (challenge !== undefined && !(yield* challenge.verify({ phone, answer, clientIp }))) {
          return yield* new ChallengeRequired()
        }
        const now = yield* Clock.currentTimeMillis
        const code = test?.code ?? (yield* withRandom(randomDigits(6)))
        const codeHash = hashCode(phone, code)
        // The resend wait is claimed first, atomically, so that concurrent sends for one phone count once. A code
        // still usable is not replaced yet: the new one is held until the caps allow it.
        const issued = yield* store.issue(
          phone,
          {
            codeHash,
            expiresAt: now + policy.codeTtlSeconds * 1000,
            resendAt: now + policy.resendIntervalSeconds * 1000
          },
          now
        )
        if (issued._tag === "ResendTooSoon") {
          yield* count(rateLimited, { limit: "otp_resend" })
          return yield* refused(issued.retryAfterMs)
        }

        const client = clientGroupOf(clientIp)
        if (client === UNKNOWN_CLIENT && !unknownClientWarned) {
          unknownClientWarned = true
          yield* Effect.logWarning(
            "walletgate: a sign-in came without a readable client address; all such sign-ins share one per-IP budget (behind a proxy, configure the adapter to trust it)"
          )
        }
        const decision = yield* limiter.consume(limitsOf(phone, client, test !== undefined), now)
        if (!decision.allowed) {
          // The held code is dropped and the pending one stays usable: a refused send voids nothing.
          yield* store.withdraw(phone, codeHash)
          // Named by the limit's kind, never its key (a key holds the phone or the address).
          for (const key of decision.refused) yield* count(rateLimited, { limit: limitName(key) })
          if (now >= ceilingWarnedUntil && decision.refused.includes(CEILING_KEY)) {
            ceilingWarnedUntil = now + decision.retryAfterMs
            yield* Effect.logWarning("walletgate: the hourly sign-in send ceiling is reached; sends are refused").pipe(
              Effect.annotateLogs({ globalSendsPerHour: policy.globalSendsPerHour })
            )
          }
          return yield* refused(decision.retryAfterMs)
        }
        if (issued._tag === "Held") yield* store.activate(phone, codeHash)

        if (test === undefined) {
          const text = policy.message(code, Math.ceil(policy.codeTtlSeconds / 60))
          // A failed SMS leaves no usable code and no resend wait behind.
          const provider = sms.provider ?? "custom"
          yield* sms.send(phone, text).pipe(
            Effect.timeoutOrElse({
              duration: Duration.seconds(policy.smsTimeoutSeconds),
              orElse: () => Effect.fail(new SmsDeliveryFailed({ cause: "the SMS sender did not answer in time" }))
            }),
            Effect.tap(() => count(smsSent, { outcome: "sent", provider })),
            Effect.tapError(() => count(smsSent, { outcome: "failed", provider })),
            Effect.withSpan("sms.send", { kind: "client", attributes: { "walletgate.sms.provider": provider } }),
            Effect.tapError((error) =>
              Effect.logWarning("walletgate: SMS delivery failed").pipe(
                Effect.annotateLogs({ phone: maskPhone(phone), cause: error.cause }),
                Effect.andThen(store.withdraw(phone, codeHash))
              )
            )
          )
        }
        yield* Effect.logInfo("walletgate: sign-in code sent").pipe(Effect.annotateLogs({ phone: maskPhone(phone) }))
        return { expiresIn: policy.codeTtlSeconds, resendAfter: policy.resendIntervalSeconds }
      })

      const verifyCode = Effect.fnUntraced(function* (input: string, code: string) {
        const phone = testPhoneOf(input)?.phone ?? (yield* parsePhone(input, policy.regions))
        const now = yield* Clock.currentTimeMillis
        const outcome = yield* store.consume(phone, hashCode(phone, code), now, policy.maxAttempts)
        if (outcome === "Rejected") {
          yield* count(signInFailed, {})
          return yield* new OtpInvalid()
        }
        const id = UserId.make(yield* withRandom(randomUuid))
        const user = yield* users.findOrCreate({ id, phone, createdAt: now })
        const { token, expiresAt } = yield* keys.sign({
          subject: user.id,
          audience: USER_TOKEN_AUDIENCE,
          type: USER_TOKEN_TYPE,
          ttlSeconds: policy.sessionTtlSeconds,
          extra: { phone_number: user.phone }
        })
        yield* count(signInVerified, {})
        yield* Effect.logInfo("walletgate: phone verified").pipe(Effect.annotateLogs({ phone: maskPhone(phone) }))
        return { accessToken: token, expiresIn: policy.sessionTtlSeconds, expiresAt, user }
      })

      return PhoneSignIn.of({ sendCode, verifyCode })
    })
  )
}

const refused = (retryAfterMs: number) => Effect.fail(rateLimitedAfter(retryAfterMs))

/** The kind of a sign-in limit's key, as metrics name it: `otp_send_ip`, `otp_send_phone`, `otp_send_prefix`, `otp_send_all`. */
const limitName = (key: string): string => key.split(":").slice(0, 3).join("_")
