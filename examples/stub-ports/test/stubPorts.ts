import {
  OtpPolicy,
  type OtpPolicyOptions,
  OtpStore,
  RateLimiter,
  SecureRandom,
  SigningKeys,
  UserStore
} from "@walletgate/core"
import { PhoneSignIn } from "@walletgate/core/otp"
import { SmsOutbox } from "@walletgate/core/testing"
import { Effect, Layer } from "effect"
import { Onboarding, Profiles } from "../src/Onboarding.ts"

/** A predictable `SecureRandom`: each call counts up, so codes come out distinct (000000, 000001, …). */
const countingRandom = Layer.sync(SecureRandom, () => {
  let counter = 0
  return SecureRandom.of({
    bytes: (length) =>
      Effect.sync(() => {
        const bytes = new Uint8Array(length)
        new DataView(bytes.buffer).setUint32(0, counter++)
        return bytes
      })
  })
})

/**
 * The app's `Onboarding` over stub ports: walletgate's in-memory stores, an {@link SmsOutbox} in place of
 * the SMS provider, a counting random source, and the app's in-memory `Profiles`. Time is the `TestClock` that `it.effect` provides.
 */
export const stubPorts = (otp: OtpPolicyOptions = {}) => {
  const outbox = new SmsOutbox()
  const layer = Onboarding.layer.pipe(
    Layer.provideMerge(Profiles.memory),
    Layer.provide(PhoneSignIn.layer),
    Layer.provide(
      Layer.mergeAll(
        OtpPolicy.layer(otp),
        OtpStore.memory,
        UserStore.memory,
        RateLimiter.memory,
        SigningKeys.ephemeral({ issuer: "test" }),
        countingRandom,
        outbox.layer
      )
    )
  )
  return { outbox, layer }
}
