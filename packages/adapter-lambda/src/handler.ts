import { type Gateway, type GatewayRequest, internalFailure, refusal, UnsupportedEvent } from "@walletgate/core/adapter"
import type { LambdaContext, LambdaHttpEvent, LambdaHttpResult } from "./events"
import { processorOf } from "./kind"
import { restApiResult } from "./restApi"
import type { Settings } from "./shared"

/** Options of {@link createHandler}. The mount prefix is the gateway's own: `makeGateway({ basePath })`. */
export interface LambdaHandlerOptions {
  /**
   * ALB only: the client address is the `X-Forwarded-For` entry the load balancer appended (its right-most).
   * Without it, every request through an ALB counts against one shared per-IP budget.
   */
  readonly trustProxy?: boolean
}

/** A Lambda function handler for HTTP events; it always resolves to a result and never throws. */
export type LambdaHttpHandler = (event: LambdaHttpEvent, context?: LambdaContext) => Promise<LambdaHttpResult>

const UNKNOWN_SHAPE =
  "The event is not an HTTP request from API Gateway (REST or HTTP API), an Application Load Balancer or a function URL."
const MISTYPED_FIELDS = "The event's fields do not have the types AWS documents for its kind."

/**
 * Makes the Lambda handler of `gateway` for API Gateway REST (payload 1.0), HTTP API (payload 2.0),
 * Application Load Balancer and function URL events, answering each in its own shape. Create the
 * gateway and the handler outside the function handler, at module scope, so warm invocations reuse
 * them: `export const handler = createHandler(gateway)`.
 */
export const createHandler = (gateway: Gateway, options: LambdaHandlerOptions = {}): LambdaHttpHandler => {
  const settings: Settings = { trustProxy: options.trustProxy === true, bodyLimit: gateway.bodyLimit }
  return async (event, context) => {
    const processor = processorOf(event, settings)
    if (processor === undefined) {
      return restApiResult(refusal(new UnsupportedEvent({ reason: UNKNOWN_SHAPE }), context?.awsRequestId))
    }
    let request: GatewayRequest
    try {
      request = processor.request()
    } catch {
      return processor.result(refusal(new UnsupportedEvent({ reason: MISTYPED_FIELDS }), context?.awsRequestId))
    }
    try {
      return processor.result(await gateway.handle(request))
    } catch {
      // `handle` never rejects by contract; should it ever, the function still answers.
      return processor.result(internalFailure(context?.awsRequestId))
    }
  }
}
