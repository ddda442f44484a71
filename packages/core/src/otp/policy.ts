import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { defaultPhoneRegions, PhoneE164, type PhoneRegion } from "./phone"

/** The rules of phone sign-in (DESIGN §4). Every field has a safe default. */
export interface OtpPolicyOptions {
  /** How long a code stays valid; default 300 s, at most 600 s. */
  readonly codeTtlSeconds?: number
  /** Wrong tries after which a code is void; default 5. */
  readonly maxAttempts?: number
  /** The shortest time between two codes for one phone; default 60 s. */
  readonly resendIntervalSeconds?: number
  /** Codes sent to one phone per hour; default 5. */
  readonly sendsPerPhonePerHour?: number
  /** Codes sent on behalf of one client IP per hour; default 20. */
  readonly sendsPerIpPerHour?: number
  /** Regions whose numbers are accepted; default US, its NANP territories and Canada. */
  readonly regions?: ReadonlyArray<PhoneRegion>
  /**
   * Test numbers with fixed codes (`{"+15005550006": "123456"}`; area code and exchange `[2-9]XX`), for app developers to sign in without
   * SMS. Off by default; never configure it in production. No SMS is sent to these numbers.
   */
  readonly testPhones?: Readonly<Record<string, string>>
  /** Lifetime of the user JWT that verifyOTP issues; default 3600 s, at most 86 400 s. */
  readonly sessionTtlSeconds?: number
  /**
   * The HMAC key codes are stored under. Every instance sharing a store must share it; without it,
   * one is made at start (fine for one process).
   */
  readonly codeSecret?: string
  /** How long to wait for the SMS provider, whatever the sender's own timeout; default 15 s, at most 60. */
  readonly smsTimeoutSeconds?: number
  /** The text of the SMS; default "Your verification code is 123456. It expires in 5 minutes." */
  readonly message?: (code: string, ttlMinutes: number) => string
}

/**
 * {@link OtpPolicyOptions} with every default applied and every bound checked. Test phones are a map of
 * their own entries only, so that no inherited property (`"toString"`, `"__proto__"`) passes for one.
 */
export type OtpPolicyValues = Required<Omit<OtpPolicyOptions, "codeSecret" | "testPhones">> & {
  readonly codeSecret?: string
  readonly testPhones: ReadonlyMap<string, TestPhone>
}

/** A configured test phone: its number, checked once at start, and its fixed code. */
export interface TestPhone {
  readonly phone: PhoneE164
  readonly code: string
}

/** The phone sign-in rules in force. */
export class OtpPolicy extends Context.Service<OtpPolicy, OtpPolicyValues>()("@walletgate/core/OtpPolicy") {
  /** The rules from `options`, with defaults; throws a `RangeError` at start for an out-of-range value. */
  static readonly layer = (options: OtpPolicyOptions = {}): Layer.Layer<OtpPolicy> =>
    Layer.succeed(OtpPolicy, OtpPolicy.of(resolveOtpPolicy(options)))
}

const positive = (name: string, value: number, max = Number.MAX_SAFE_INTEGER): number => {
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new RangeError(`otp.${name} must be a whole number from 1 to ${max}, got ${value}`)
  }
  return value
}

/** Applies the defaults of {@link OtpPolicyOptions} and checks its bounds. */
export const resolveOtpPolicy = (options: OtpPolicyOptions): OtpPolicyValues => {
  const testPhones = new Map<string, TestPhone>()
  for (const [phone, code] of Object.entries(options.testPhones ?? {})) {
    if (!Schema.is(PhoneE164)(phone)) {
      throw new RangeError(`otp.testPhones: ${phone} is not an E.164 NANP number such as +15005550006`)
    }
    if (!/^\d{6}$/.test(code)) throw new RangeError(`otp.testPhones: the code of ${phone} is not 6 digits`)
    testPhones.set(phone, { phone, code })
  }
  return {
    codeTtlSeconds: positive("codeTtlSeconds", options.codeTtlSeconds ?? 300, 600),
    maxAttempts: positive("maxAttempts", options.maxAttempts ?? 5, 10),
    resendIntervalSeconds: positive("resendIntervalSeconds", options.resendIntervalSeconds ?? 60, 3600),
    sendsPerPhonePerHour: positive("sendsPerPhonePerHour", options.sendsPerPhonePerHour ?? 5),
    sendsPerIpPerHour: positive("sendsPerIpPerHour", options.sendsPerIpPerHour ?? 20),
    smsTimeoutSeconds: positive("smsTimeoutSeconds", options.smsTimeoutSeconds ?? 15, 60),
    sessionTtlSeconds: positive("sessionTtlSeconds", options.sessionTtlSeconds ?? 3600, 86_400),
    ...(options.codeSecret === undefined ? {} : { codeSecret: options.codeSecret }),
    regions: options.regions ?? defaultPhoneRegions,
    testPhones,
    message:
      options.message ?? ((code, minutes) => `Your verification code is ${code}. It expires in ${minutes} minutes.`)
  }
}
