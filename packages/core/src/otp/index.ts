// `@walletgate/core/otp`: phone sign-in alone. Imports no chain code, so a sign-in-only gateway built from
// this entry and `@walletgate/core/compose` loads no viem.

export { PhoneE164, type PhoneRegion } from "../auth/phone"
export type { ChallengeRequired, InvalidPhone, OtpError, OtpInvalid, SmsDeliveryFailed } from "./errors"
export { type EmbeddedSignInOptions, embeddedSignInPorts, type PhoneSignInPorts, phoneSignIn } from "./module"
export { type ConsumeOutcome, type IssueOutcome, OtpStore, type PendingCode } from "./OtpStore"
export { type CodeSent, PhoneSignIn, type Session } from "./PhoneSignIn"
export { OtpPolicy, type OtpPolicyOptions, type OtpPolicyValues, type TestPhone } from "./policy"
export type { SignInWithOtpRequest, SignInWithOtpResponse, VerifyOtpRequest, VerifyOtpResponse } from "./routes"
export { type ChallengeAttempt, SignInChallenge } from "./SignInChallenge"
export { SmsSender, type SmsWebhookConfig, type TwilioConfig } from "./SmsSender"
export { User, UserId, UserStore } from "./UserStore"
