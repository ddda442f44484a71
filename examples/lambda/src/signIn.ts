// A function that serves phone sign-in alone (signInWithOTP, verifyOTP, the JWKS), its state on Redis: the gateway
// composed of one module, over the Redis stores of phone sign-in alone (codes, users, rate limits) on one connection,
// so the bundle carries no chain code and no other store (packages/core/test/bundle/signInOnly.test.ts checks it). The benchmark measures its cold start beside the
// whole gateway's (bench/lambda.ts); template.yaml routes every /functions/v1/ path to it (`Handler: signIn.handler`).
import { composeGateway } from "@walletgate/core/compose"
import { embeddedSignInPorts, phoneSignIn } from "@walletgate/core/otp"
import { createHandler } from "@walletgate/lambda"
import { RedisConnection, RedisSignInStores } from "@walletgate/redis"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { signInSettings } from "./settings"

const settings = await Effect.runPromise(signInSettings())

const gateway = composeGateway({
  modules: [phoneSignIn()],
  ports: Layer.mergeAll(
    embeddedSignInPorts({ issuer: settings.issuer }),
    settings.smsSender,
    settings.signingKeys,
    RedisSignInStores.pipe(Layer.provide(RedisConnection.layer(settings.redis)))
  )
})
await gateway.ready()

/** The function's handler: `signIn.handler`. */
export const handler = createHandler(gateway, { trustProxy: true })
