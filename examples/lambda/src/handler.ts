// walletgate in production as one AWS Lambda function: every route (phone sign-in, app tokens, wallet transactions,
// payouts, the /api lookups, health), its state on Redis, its networks and bundlers from the networks file, its secrets
// from the environment. This module runs once per container, at cold start: the settings are read and the gateway's
// layers built here (a bad setting fails the init, not a user's request), so warm invocations pay nothing for setup.
// Nothing runs after an answer: every request's work (a user operation sent to the bundler, an SMS) is done before
// the handler returns, and a container frozen between invocations has nothing left to do.
import { createHandler } from "@walletgate/lambda"
import * as Effect from "effect/Effect"
import { everyRouteGateway } from "./everyRoute"
import { productionSettings } from "./settings"

const gateway = everyRouteGateway(await Effect.runPromise(productionSettings()))

// Build the layers during the init phase: a bad configuration fails the cold start, not a user's request. Redis is
// waited for up to a second; if it does not answer, the init still completes and every request that needs state
// answers 503 store_unavailable until it does (the README's "Redis unreachable").
await gateway.ready()

/**
 * The function's handler: `handler.handler` in template.yaml. It trusts its proxy: behind an ALB the client
 * address is then the X-Forwarded-For entry the load balancer appended, so each client has its own per-IP
 * sign-in budget (see the README). API Gateway events carry the source address whatever this says.
 */
export const handler = createHandler(gateway, { trustProxy: true })
