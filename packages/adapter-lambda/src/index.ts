export type {
  AlbEvent,
  HttpApiEvent,
  LambdaContext,
  LambdaHttpEvent,
  LambdaHttpResult,
  MultiValues,
  RestApiEvent,
  SingleValues
} from "./events"
export { createHandler, type LambdaHandlerOptions, type LambdaHttpHandler } from "./handler"
