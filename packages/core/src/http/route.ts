import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import type { FieldProblem, Tagged } from "../internal/problem"
import type { GatewayRequest, ResponseHeaders } from "./contract"
import { InvalidRequest } from "./errors"

/** The HTTP methods routes are declared with. */
export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS"

/** The media types a route's body may come in. */
export type BodyMedia = "application/json" | "application/x-www-form-urlencoded"

/** What a route handler sees besides its decoded body. */
export interface RouteContext {
  readonly request: GatewayRequest
  /** The path's `:params`, percent-decoded. */
  readonly params: Readonly<Record<string, string>>
  readonly requestId: string
  readonly clientIp: string | undefined
}

/**
 * A JSON body serialised once, for an answer that never changes (the OpenAPI document): the gateway sends its text
 * as it is instead of serialising the value on every request.
 */
export class SerialisedJson {
  /** The JSON text of `value`. */
  readonly text: string
  constructor(value: unknown) {
    this.text = JSON.stringify(value)
  }
}

/**
 * A body that is not JSON (the operator console's page, script and stylesheet; Prometheus' text): its text, sent as it is, with its
 * media type as `content-type`.
 */
export class ServedText {
  constructor(
    /** The body. */
    readonly text: string,
    /** Its `content-type` (`text/html; charset=utf-8`). */
    readonly contentType: string
  ) {}
}

/**
 * What a route handler answers: a status and a JSON-serialisable body, or one already serialised
 * ({@link SerialisedJson}), or a text of another media type ({@link ServedText}); `undefined`: no body, no
 * content-type.
 */
export interface Reply {
  readonly status: number
  readonly body: unknown
  /** Headers of the answer; a field of several values (`set-cookie`) is written once per value. */
  readonly headers?: ResponseHeaders
}

/** A route's handler: the effect that answers, which `yield*`s the services it uses. */
export type Handler<A, R, E extends Tagged = Tagged> = (body: A, context: RouteContext) => Effect.Effect<Reply, E, R>

/** A route as the router holds it: its body, if any, is parsed but not yet decoded; `E` its errors. */
export interface Route<R, E extends Tagged = Tagged> {
  readonly method: Method
  readonly path: string
  /** The media types accepted for the body; empty when the route takes no body. */
  readonly accepts: ReadonlyArray<BodyMedia>
  readonly run: Handler<unknown, R, E | InvalidRequest>
  /**
   * Headers added to every answer of this route, problems included: CORS headers must reach a browser
   * on a 400 or a 503 too, or it cannot read them.
   */
  readonly answerHeaders?: (context: RouteContext) => Effect.Effect<Readonly<Record<string, string>>, never, R>
  /** The schema the router decodes the body with (set by {@link routeWithBody}). */
  readonly body?: Schema.Constraint
  /** What the OpenAPI document says of the route beyond what the router knows. */
  readonly doc?: RouteDoc
}

/** The services a route (or a union of routes) runs with. */
export type RouteServices<T> = T extends Route<infer R, infer _E> ? R : never
/** The errors a route (or a union of routes) raises. */
export type RouteErrors<T> = T extends Route<infer _R, infer E> ? E : never

/** How a route's caller authenticates: an app's Bearer token, an automation key, client credentials, or an operator token. */
export type RouteSecurity = "bearer" | "apiKey" | "clientCredentials" | "operator"

/** One answer of a route other than its problems: status, what it means, and its body's schema if it has one. */
export interface RouteAnswer {
  readonly status: number
  readonly description: string
  readonly schema?: Schema.Constraint
  /** Default `application/json`. */
  readonly mediaType?: string
}

/** A route's documentation: declarative, next to the route; read only to build the OpenAPI document. */
export interface RouteDoc {
  readonly summary: string
  /** Absent: no authentication. */
  readonly security?: RouteSecurity
  /** The body's real schema, for a route that decodes the body itself (after authenticating). */
  readonly body?: Schema.Constraint
  /** The path's `:params` by name; a param not listed is a string. */
  readonly params?: Schema.Struct<Schema.Struct.Fields>
  /** The query parameters by name. */
  readonly query?: Schema.Struct<Schema.Struct.Fields>
  /** The route takes an `Idempotency-Key` header. */
  readonly idempotent?: boolean
  readonly answers: ReadonlyArray<RouteAnswer>
}

/** `route` with its documentation. */
export const documented = <R, E extends Tagged>(route: Route<R, E>, doc: RouteDoc): Route<R, E> => ({ ...route, doc })

/** A schema that decodes without services. */
export type BodySchema<A> = Schema.Decoder<A, never>

/** A route with no body (GET, DELETE, OPTIONS). */
export const routeWithoutBody = <R, E extends Tagged>(
  method: Method,
  path: string,
  handler: (context: RouteContext) => Effect.Effect<Reply, E, R>
): Route<R, E> => ({ method, path, accepts: [], run: (_, context) => handler(context) })

/** A route whose body is decoded with `schema` before `handler` sees it. */
export const routeWithBody = <A, R, E extends Tagged>(
  method: Method,
  path: string,
  schema: BodySchema<A>,
  handler: Handler<A, R, E>,
  accepts: ReadonlyArray<BodyMedia> = ["application/json"]
): Route<R, E> => {
  const decode = decoderOf(schema)
  return {
    method,
    path,
    accepts,
    body: schema,
    run: (body, context) => Effect.flatMap(decode(body), (decoded) => handler(decoded, context))
  }
}

/** How request data is decoded. */
export interface DecodeOptions {
  /**
   * Refuse fields the schema does not declare (`Unexpected field`) instead of dropping them: for requests that
   * move money, where a field the gateway does not know may mean something the caller expects to happen.
   */
  readonly exact?: boolean
}

/**
 * A decoder for request data (`effect/Schema`) that fails with {@link InvalidRequest} listing every field problem:
 * what {@link routeWithBody} decodes its body with, and what routes that must authenticate before they look at the
 * body decode it with themselves.
 */
export const decoderOf = <A>(schema: BodySchema<A>, options: DecodeOptions = {}) => {
  const decode = Schema.decodeUnknownEffect(schema)
  const parseOptions = { errors: "all", onExcessProperty: options.exact === true ? "error" : "ignore" } as const
  return (input: unknown): Effect.Effect<A, InvalidRequest> =>
    Effect.mapError(decode(input, parseOptions), (error) => new InvalidRequest({ errors: fieldProblems(error.issue) }))
}

// Messages never include the input: a refused field may hold a code, a key or a token.
const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1({
  leafHook: (issue) => {
    switch (issue._tag) {
      case "MissingKey":
        return "Required"
      case "UnexpectedKey":
        return "Unexpected field"
      case "InvalidType":
        return `Expected ${expectedType(issue.ast._tag)}`
      case "OneOf":
        return "Matches more than one alternative"
      case "Forbidden":
        return "Not allowed"
      default:
        return "Invalid value"
    }
  },
  checkHook: (issue) => SchemaIssue.defaultCheckHook(issue) ?? ruleMessage(issue.issue) ?? "Invalid value"
})

/** The message a rule across fields gives at the field it names (`{ path, issue }` of a filter); never the input. */
const ruleMessage = (issue: SchemaIssue.Issue): string | undefined => {
  if (issue._tag === "Pointer") return ruleMessage(issue.issue)
  const message = issue._tag === "InvalidValue" ? issue.annotations?.message : undefined
  return typeof message === "string" ? message : undefined
}

const expectedType = (tag: string): string => {
  switch (tag) {
    case "String":
      return "a string"
    case "Number":
      return "a number"
    case "Boolean":
      return "a boolean"
    case "Arrays":
      return "an array"
    case "Objects":
      return "an object"
    default:
      return "another type"
  }
}

/** The field-level problems of a decoding failure, with JSON Pointer paths. */
export const fieldProblems = (issue: SchemaIssue.Issue): ReadonlyArray<FieldProblem> =>
  formatIssue(issue).issues.map(
    (problem): FieldProblem => ({
      path: (problem.path ?? [])
        .map((segment) => {
          const key = typeof segment === "object" && segment !== null ? segment.key : segment
          return `/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`
        })
        .join(""),
      message: problem.message
    })
  )
