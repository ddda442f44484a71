// walletgate as one AWS Lambda function. This module runs once per container, at cold start: the gateway
// and its layers are built here, so warm invocations pay nothing for setup. `handler` answers API Gateway
// (REST and HTTP API), ALB and function URL events alike.
import { embeddedPorts, makeGateway } from "@walletgate/core"
import {
  issuerFromEnv,
  optionalMasterSecretFromEnv,
  signingKeysFromEnv,
  smsSenderFromEnv
} from "@walletgate/core/config"
import { createHandler } from "@walletgate/lambda"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

// Every setting is read through the core's configuration (docs/configuration.md): a bad one fails the cold start
// with an Error naming it, what is wrong and a valid example, never a secret's value.
const { issuer, masterSecret } = await Effect.runPromise(
  Effect.all({ issuer: issuerFromEnv, masterSecret: optionalMasterSecretFromEnv })
)

const gateway = makeGateway({
  ports: Layer.mergeAll(
    // Every container must derive the same wallets: without a master secret, each makes its own.
    embeddedPorts({
      issuer,
      ...Option.match(masterSecret, { onNone: () => ({}), onSome: (value) => ({ masterSecret: value }) })
    }),
    // WALLETGATE_SMS=console|twilio|webhook and its variables.
    smsSenderFromEnv,
    // WALLETGATE_SIGNING_KEY keeps tokens valid across containers and cold starts; without one, each container
    // makes its own.
    signingKeysFromEnv(issuer)
  )
})

// Build the layers during the init phase: a bad configuration fails the cold start, not a user's request.
await gateway.ready()

/**
 * The function's handler: `handler.handler` in template.yaml. It trusts its proxy: behind an ALB the client
 * address is then the X-Forwarded-For entry the load balancer appended, so each client has its own per-IP
 * sign-in budget (see the README). API Gateway events carry the source address whatever this says.
 */
export const handler = createHandler(gateway, { trustProxy: true })
