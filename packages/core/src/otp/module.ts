import type { SigningKeys } from "../auth/SigningKeys"
import { defineModule, type GatewayModule } from "../http/module"
import type { SecureRandom } from "../random/SecureRandom"
import type { RateLimiter } from "../state/RateLimiter"
import { type OtpError, otpProblems } from "./errors"
import type { OtpStore } from "./OtpStore"
import { PhoneSignIn } from "./PhoneSignIn"
import type { OtpPolicy } from "./policy"
import { otpRoutes } from "./routes"
import type { SmsSender } from "./SmsSender"
import type { UserStore } from "./UserStore"

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
