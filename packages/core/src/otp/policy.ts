import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { defaultPhoneRegions, PhoneE164, type PhoneRegion } from "../auth/phone"

/** The rules of phone sign-in (docs/security.md). Every field has a safe default. */
export interface OtpPolicyOptions {
  /** How long a code stays valid; default 300 s, at most 600 s. */
  readonly codeTtlSeconds?: number
  /** Wrong tries after which a code is void; default 5. */
  readonly maxAttempts?: number
  /** The shortest time between two codes for one phone; default 60 s. */
  readonly resendIntervalSeconds?: number
  /**
   * Codes sent to one phone per window of `phoneWindowSeconds`; default 5. Past it sends are refused (the pending
   * code stays usable), so whoever spends a phone's sends keeps it from a new code until that window ends.
   */
  readonly sendsPerPhone?: number
  /** The window `sendsPerPhone` counts in, which bounds how long a phone can be kept from a new code; default 900 s, at most 3600. */
  readonly phoneWindowSeconds?: number
  /**
   * Codes sent per hour on behalf of one client: an IPv4 address, or an IPv6 /64; every request whose address is
   * unknown (no trusted address from the host) counts against one shared budget. Default 20.
   */
  readonly sendsPerIpPerHour?: number
  /** Codes sent per hour into one NPA-NXX (the first six digits after `+1`), against SMS pumping; default 10. */
  readonly sendsPerPrefixPerHour?: number
  /** Codes sent per hour by the whole deployment: the most SMS an hour can cost; default 1000. */
  readonly globalSendsPerHour?: number
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
const resolveOtpPolicy = (options: OtpPolicyOptions): OtpPolicyValues => {
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
    sendsPerPhone: positive("sendsPerPhone", options.sendsPerPhone ?? 5),
    phoneWindowSeconds: positive("phoneWindowSeconds", options.phoneWindowSeconds ?? 900, 3600),
    sendsPerIpPerHour: positive("sendsPerIpPerHour", options.sendsPerIpPerHour ?? 20),
    sendsPerPrefixPerHour: positive("sendsPerPrefixPerHour", options.sendsPerPrefixPerHour ?? 10),
    globalSendsPerHour: positive("globalSendsPerHour", options.globalSendsPerHour ?? 1000),
    smsTimeoutSeconds: positive("smsTimeoutSeconds", options.smsTimeoutSeconds ?? 15, 60),
    sessionTtlSeconds: positive("sessionTtlSeconds", options.sessionTtlSeconds ?? 3600, 86_400),
    ...(options.codeSecret === undefined ? {} : { codeSecret: options.codeSecret }),
    regions: options.regions ?? defaultPhoneRegions,
    testPhones,
    message:
      options.message ?? ((code, minutes) => `Your verification code is ${code}. It expires in ${minutes} minutes.`)
  }
}
