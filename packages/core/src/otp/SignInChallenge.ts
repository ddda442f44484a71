import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { PhoneE164 } from "../auth/phone"

/** What a sign-in challenge checks: the answer a send came with, and what it may be bound to. */
export interface ChallengeAttempt {
  /** The number the code would be sent to, already checked. */
  readonly phone: PhoneE164
  /** The body's `challenge` field, if the client sent one. */
  readonly answer: string | undefined
  /** The client's address as the host determined it, if it is known. */
  readonly clientIp: string | undefined
}

/**
 * An optional gate before any sign-in code is sent: back it with a captcha (verify the token with its provider) or
 * a proof of work. Without this service no answer is asked for. With it, a send whose answer it does not accept is
 * refused with 403 `challenge_required` before anything is counted or sent.
 */
export class SignInChallenge extends Context.Service<
  SignInChallenge,
  {
    /**
     * Whether the attempt's answer is good for this send (`false` for a missing one). When the checker cannot
     * tell (its provider is down), answering `false` keeps sign-in closed, `true` keeps it open: the app decides.
     */
    readonly verify: (attempt: ChallengeAttempt) => Effect.Effect<boolean>
  }
>()("@walletgate/core/SignInChallenge") {}
