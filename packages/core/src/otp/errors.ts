import * as Schema from "effect/Schema"
import { InvalidPhone } from "../auth/phone"
import type { ProblemSlice } from "../internal/problem"

export { InvalidPhone }

/**
 * The code is wrong, expired, already used or voided. One error for all four, so answers reveal
 * nothing about which. Answered 401 `otp_invalid`.
 */
export class OtpInvalid extends Schema.TaggedError<OtpInvalid>()("OtpInvalid", {}) {}

/** The SMS provider refused or did not answer; no usable code was left behind. Answered 502. */
export class SmsDeliveryFailed extends Schema.TaggedError<SmsDeliveryFailed>()("SmsDeliveryFailed", {
  /** The provider's answer, for the operator's log only (never shown to the client). */
  cause: Schema.String
}) {}

/**
 * The app asks for a sign-in challenge (`SignInChallenge`) and the send came without a good answer in its
 * `challenge` field. Nothing was counted or sent. Answered 403 `challenge_required`.
 */
export class ChallengeRequired extends Schema.TaggedError<ChallengeRequired>()("ChallengeRequired", {}) {}

/** The errors of phone sign-in. */
export type OtpError = InvalidPhone | OtpInvalid | SmsDeliveryFailed | ChallengeRequired

/** How phone sign-in's errors are answered. */
export const otpProblems: ProblemSlice<OtpError> = {
  InvalidPhone: {
    status: 400,
    code: "invalid_phone",
    title: "Invalid phone number",
    detail: (e) => `Use a US or Canadian number with the +1 prefix: ${e.reason}.`
  },
  OtpInvalid: {
    status: 401,
    code: "otp_invalid",
    title: "Invalid code",
    detail: () => "The code is wrong, expired or already used. Request a new one."
  },
  SmsDeliveryFailed: {
    status: 502,
    code: "sms_delivery_failed",
    title: "SMS delivery failed",
    detail: () => "The code could not be sent. Try again."
  },
  ChallengeRequired: {
    status: 403,
    code: "challenge_required",
    title: "Challenge required",
    detail: () => "Solve the sign-in challenge and send its answer in the challenge field."
  }
}
