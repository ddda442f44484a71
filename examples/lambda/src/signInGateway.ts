// Phone sign-in alone (signInWithOTP, verifyOTP, the JWKS: every /functions/v1/ route), its state on Redis: the gateway
// composed of one module, over the Redis stores of phone sign-in alone (codes, users, rate limits) on one connection,
// so what imports it carries no chain code and no other store (packages/core/test/bundle/signInOnly.test.ts).
import { composeGateway } from "@walletgate/core/compose"
import { embeddedSignInPorts, phoneSignIn } from "@walletgate/core/otp"
import { RedisConnection, RedisSignInStores } from "@walletgate/redis"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { signInSettings } from "./settings"

/** The settings phone sign-in is built from (`signInSettings()`). */
export type SignInSettings = Effect.Success<ReturnType<typeof signInSettings>>

/** The gateway of phone sign-in alone on Redis. */
export const signInGateway = (settings: SignInSettings) =>
  composeGateway({
    modules: [phoneSignIn()],
    ports: Layer.mergeAll(
      embeddedSignInPorts({ issuer: settings.issuer }),
      settings.smsSender,
      settings.signingKeys,
      RedisSignInStores.pipe(Layer.provide(RedisConnection.layer(settings.redis)))
    )
  })
