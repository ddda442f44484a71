// walletgate as one AWS Lambda function. This module runs once per container, at cold start: the gateway
// and its layers are built here, so warm invocations pay nothing for setup. `handler` answers API Gateway
// (REST and HTTP API), ALB and function URL events alike.
import { embeddedPorts, makeGateway, SigningKeys } from "@walletgate/core"
import { smsSenderFromEnv } from "@walletgate/core/config"
import { createHandler } from "@walletgate/lambda"
import * as Layer from "effect/Layer"

const issuer = process.env.WALLETGATE_ISSUER ?? "walletgate"
const signingKey = process.env.WALLETGATE_SIGNING_KEY ?? ""
const masterSecret = process.env.WALLETGATE_MASTER_SECRET ?? ""

const gateway = makeGateway({
  ports: Layer.mergeAll(
    // Every container must derive the same wallets: without a master secret, each makes its own.
    embeddedPorts({ issuer, ...(masterSecret === "" ? {} : { masterSecret }) }),
    // WALLETGATE_SMS=console|twilio|webhook and its variables (see the README).
    smsSenderFromEnv,
    // A configured key keeps tokens valid across containers and cold starts; without one, each container
    // makes its own.
    signingKey === "" ? Layer.empty : SigningKeys.fromPrivateKey({ issuer, algorithm: "EdDSA", privateKey: signingKey })
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
