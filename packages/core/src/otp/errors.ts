import * as Schema from "effect/Schema"

/** The phone number is not a US or Canadian number we can text. Answered 400 `invalid_phone`. */
export class InvalidPhone extends Schema.TaggedError<InvalidPhone>()("InvalidPhone", {
  reason: Schema.String
}) {}

/**
 * The code is wrong, expired, already used or voided. One error for all four, so answers reveal
 * nothing about which. Answered 401 `otp_invalid`.
 */
export class OtpInvalid extends Schema.TaggedError<OtpInvalid>()("OtpInvalid", {}) {}

/** Too many requests; retry after the given number of seconds. Answered 429 `rate_limited`. */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  retryAfterSeconds: Schema.Int
}) {}

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
