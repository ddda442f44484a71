// A function that serves phone sign-in alone (signInWithOTP, verifyOTP, the JWKS), its state on Redis
// (./signInGateway): the bundle carries no chain code and no other store (packages/core/test/bundle/signInOnly.test.ts
// checks it). The benchmark measures its cold start beside the whole gateway's (bench/lambda.ts).
import { createHandler } from "@walletgate/lambda"
import * as Effect from "effect/Effect"
import { signInSettings } from "./settings"
import { signInGateway } from "./signInGateway"

const gateway = signInGateway(await Effect.runPromise(signInSettings()))
await gateway.ready()

/** The function's handler: `signIn.handler`. */
export const handler = createHandler(gateway, { trustProxy: true })
