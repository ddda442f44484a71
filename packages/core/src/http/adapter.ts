// `@walletgate/core/adapter`: what a framework adapter uses to hand requests to a gateway and write its
// answers back: the neutral request and response, header mapping, body reading within the gateway's limit,
// the mount prefix, and the answers for a request the adapter itself cannot take.
export {
  type BodySource,
  type FetchOptions,
  type Gateway,
  type GatewayRequest,
  type GatewayResponse,
  type HeaderValue,
  type HostHeaders,
  type HostStream,
  handleReadingBody,
  internalFailure,
  pathBelow,
  type ResponseHeaders,
  readBodyWithin,
  readRequestBody,
  refusal,
  singleValuedHeaders
} from "./contract"
export { UnsupportedEvent } from "./errors"
export { internalErrorDocument, type ProblemDocument } from "./problem"
