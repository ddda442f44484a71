import type { GatewayResponse } from "@walletgate/core/adapter"
import type { LambdaHttpResult, RestApiEvent } from "./events"
import {
  encodePath,
  headersOf,
  type Processor,
  rawBody,
  remoteAddress,
  type Settings,
  splitHeaders,
  type Values,
  valuesOf
} from "./shared"

/** REST API query values, which API Gateway already percent-decoded. */
const decodedQuery = (values: Values): URLSearchParams => {
  const query = new URLSearchParams()
  for (const [name, all] of values) for (const value of all) query.append(name, value)
  return query
}

/**
 * API Gateway REST API (payload 1.0). `path` holds no stage on the execute-api endpoint and the base path mapping
 * on a custom domain: the gateway's `basePath` is that mapping.
 */
export const restApi = (event: RestApiEvent, { bodyLimit }: Settings): Processor => ({
  request: () => ({
    method: event.httpMethod,
    path: encodePath(event.path),
    query: decodedQuery(valuesOf(event.queryStringParameters, event.multiValueQueryStringParameters)),
    headers: headersOf(valuesOf(event.headers, event.multiValueHeaders)),
    ...remoteAddress(event.requestContext.identity?.sourceIp),
    ...rawBody(event, bodyLimit)
  }),
  result: restApiResult
})

/**
 * The REST API shape: fields of one value in `headers`, those of several (`set-cookie`) in `multiValueHeaders`,
 * which API Gateway merges. Also the answer to an event of no known kind (HTTP API and function URLs accept it too).
 */
export const restApiResult = (response: GatewayResponse): LambdaHttpResult => {
  const { single, multi } = splitHeaders(response.headers)
  return {
    statusCode: response.status,
    headers: single,
    ...(Object.keys(multi).length === 0 ? {} : { multiValueHeaders: multi }),
    body: response.body,
    isBase64Encoded: false
  }
}
