import type { RateLimited, StoreUnavailable } from "@walletgate/core"
import {
  type ChallengeRequired,
  type CodeSent,
  type InvalidPhone,
  type OtpInvalid,
  PhoneSignIn,
  type SmsDeliveryFailed
} from "@walletgate/core/otp"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** The app's own record of a walletgate user. */
export interface Profile {
  readonly userId: string
  readonly phone: string
  readonly displayName: string
  readonly createdAt: number
}

/** The app's own port: where profiles live (a database in production, a `Map` here). */
export class Profiles extends Context.Service<
  Profiles,
  {
    readonly find: (userId: string) => Effect.Effect<Profile | undefined>
    readonly save: (profile: Profile) => Effect.Effect<void>
  }
>()("example/Profiles") {
  /** Profiles in memory, one `Map` per layer build. */
  static readonly memory: Layer.Layer<Profiles> = Layer.sync(Profiles, () => {
    const byUserId = new Map<string, Profile>()
    return Profiles.of({
      find: (userId) => Effect.sync(() => byUserId.get(userId)),
      save: (profile) => Effect.sync(() => void byUserId.set(profile.userId, profile))
    })
  })
}

/** What finishing a sign-in gives the app's client. */
export interface SignedIn {
  readonly accessToken: string
  readonly profile: Profile
  readonly firstSignIn: boolean
}

/**
 * The app's sign-in use case, built on walletgate's `PhoneSignIn`: a code by SMS, and at the first
 * successful sign-in of a phone, a profile.
 */
export class Onboarding extends Context.Service<
  Onboarding,
  {
    /** Texts a code to `phone` (walletgate's resend interval, caps and sign-in challenge, if any, apply). */
    readonly start: (
      phone: string,
      clientIp: string | undefined,
      challenge?: string
    ) => Effect.Effect<CodeSent, InvalidPhone | ChallengeRequired | RateLimited | SmsDeliveryFailed | StoreUnavailable>
    /** Exchanges the code for a token, making the phone's profile the first time. */
    readonly finish: (
      phone: string,
      code: string,
      displayName: string
    ) => Effect.Effect<SignedIn, InvalidPhone | OtpInvalid | StoreUnavailable>
  }
>()("example/Onboarding") {
  /** The use case over `PhoneSignIn` and `Profiles`. */
  static readonly layer = Layer.effect(
    Onboarding,
    Effect.gen(function* () {
      const signIn = yield* PhoneSignIn
      const profiles = yield* Profiles

      const finish = Effect.fn("Onboarding.finish")(function* (phone: string, code: string, displayName: string) {
        const session = yield* signIn.verifyCode(phone, code)
        const known = yield* profiles.find(session.user.id)
        if (known !== undefined) return { accessToken: session.accessToken, profile: known, firstSignIn: false }
        const profile: Profile = {
          userId: session.user.id,
          phone: session.user.phone,
          displayName,
          createdAt: yield* Clock.currentTimeMillis
        }
        yield* profiles.save(profile)
        return { accessToken: session.accessToken, profile, firstSignIn: true }
      })

      return Onboarding.of({ start: signIn.sendCode, finish })
    })
  )
}
