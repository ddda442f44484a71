import * as Layer from "effect/Layer"
import { SigningKeys } from "../auth/SigningKeys"
import { defineModule, type GatewayModule } from "../http/module"
import { SecureRandom } from "../random/SecureRandom"
import { RateLimiter } from "../state/RateLimiter"
import { type OtpError, otpProblems } from "./errors"
import { OtpStore } from "./OtpStore"
import { PhoneSignIn } from "./PhoneSignIn"
import { OtpPolicy, type OtpPolicyOptions } from "./policy"
import { otpRoutes } from "./routes"
import { SmsSender } from "./SmsSender"
import { UserStore } from "./UserStore"

/** The ports phone sign-in needs. */
export type PhoneSignInPorts = OtpPolicy | OtpStore | SmsSender | RateLimiter | UserStore | SigningKeys | SecureRandom

/**
 * Phone sign-in (SPEC §4.1–4.2): `signInWithOTP`, `verifyOTP` and the JWKS that verifies the user tokens
 * it issues. Needs no chain: a gateway of this module alone bundles none.
 */
export const phoneSignIn = (): GatewayModule<PhoneSignInPorts, PhoneSignIn> =>
  defineModule<PhoneSignIn, PhoneSignInPorts, OtpError>({
    name: "phoneSignIn",
    layer: PhoneSignIn.layer,
    routes: otpRoutes,
    problems: otpProblems
  })

/** Options of {@link embeddedSignInPorts}. */
export interface EmbeddedSignInOptions {
  /** The `iss` of issued tokens; default `walletgate`. */
  readonly issuer?: string
  /** Phone sign-in rules. */
  readonly otp?: OtpPolicyOptions
}

/**
 * Phone sign-in's embedded defaults: codes, users and rate limits in memory, the console SMS outbox, an
 * ephemeral signing key and the platform CSPRNG. For development, tests and one process.
 */
export const embeddedSignInPorts = (options: EmbeddedSignInOptions = {}): Layer.Layer<PhoneSignInPorts> =>
  Layer.mergeAll(
    OtpPolicy.layer(options.otp),
    OtpStore.memory,
    UserStore.memory,
    RateLimiter.memory,
    SigningKeys.ephemeral({ issuer: options.issuer ?? "walletgate" }),
    SmsSender.console(),
    SecureRandom.crypto
  )
