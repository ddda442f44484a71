import * as Schema from "effect/Schema"
import { FieldProblem, type ProblemSlice } from "../internal/problem"

/** No route has this path. Answered 404 `not_found`. */
export class RouteNotFound extends Schema.TaggedError<RouteNotFound>()("RouteNotFound", {}) {}

/** The path exists, the method does not. Answered 405 `method_not_allowed` with `Allow`. */
export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()("MethodNotAllowed", {
  allow: Schema.Array(Schema.String)
}) {}

/** The body's `content-type` is not one the route accepts. Answered 415 `unsupported_media_type`. */
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", {
  accepted: Schema.Array(Schema.String)
}) {}

/**
 * The body is (or is declared) larger than the gateway's limit. Answered 413 `payload_too_large`, closing the
 * connection: the rest of the body was not read.
 */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", {
  limit: Schema.Int
}) {}

/**
 * The body could not be read to its end: the client went away or its stream failed mid-body. Answered 400
 * `body_incomplete` (to a client that is usually gone), closing the connection.
 */
export class BodyIncomplete extends Schema.TaggedError<BodyIncomplete>()("BodyIncomplete", {}) {}

/** The route needs a body and none came. Answered 400 `body_required`. */
export class BodyRequired extends Schema.TaggedError<BodyRequired>()("BodyRequired", {}) {}

/** The body is not valid JSON (or not UTF-8). Answered 400 `invalid_json`. */
export class MalformedJson extends Schema.TaggedError<MalformedJson>()("MalformedJson", {}) {}

/** The body, path or query does not have the shape the route needs. Answered 400 `invalid_request`. */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  errors: Schema.Array(FieldProblem)
}) {}

/** An adapter was handed something that is not an HTTP request it knows (a Lambda event of another kind). */
export class UnsupportedEvent extends Schema.TaggedError<UnsupportedEvent>()("UnsupportedEvent", {
  reason: Schema.String
}) {}

/** The errors of the transport itself: routing, media types, bodies and their shape. */
export type TransportError =
  | RouteNotFound
  | MethodNotAllowed
  | UnsupportedMediaType
  | PayloadTooLarge
  | BodyIncomplete
  | UnsupportedEvent
  | BodyRequired
  | MalformedJson
  | InvalidRequest

const CLOSE: Readonly<Record<string, string>> = { connection: "close" }

/** How the transport's errors are answered. */
export const transportProblems: ProblemSlice<TransportError> = {
  RouteNotFound: { status: 404, code: "not_found", title: "Not found", detail: () => "No such endpoint." },
  MethodNotAllowed: {
    status: 405,
    code: "method_not_allowed",
    title: "Method not allowed",
    detail: (e) => `This endpoint accepts ${e.allow.join(", ")}.`,
    headers: (e) => ({ allow: e.allow.join(", ") })
  },
  UnsupportedMediaType: {
    status: 415,
    code: "unsupported_media_type",
    title: "Unsupported media type",
    detail: (e) => `Send the body as ${e.accepted.join(" or ")}.`
  },
  PayloadTooLarge: {
    status: 413,
    code: "payload_too_large",
    title: "Payload too large",
    detail: (e) => `The body may be at most ${e.limit} bytes.`,
    // What is left of the body was not read: the connection cannot carry another request (RFC 9112 §9.6).
    headers: () => CLOSE
  },
  BodyIncomplete: {
    status: 400,
    code: "body_incomplete",
    title: "Body incomplete",
    detail: () => "The body ended before it was complete.",
    headers: () => CLOSE
  },
  UnsupportedEvent: {
    status: 400,
    code: "unsupported_event",
    title: "Unsupported event",
    detail: (e) => e.reason
  },
  BodyRequired: {
    status: 400,
    code: "body_required",
    title: "Body required",
    detail: () => "This endpoint needs a JSON body."
  },
  MalformedJson: {
    status: 400,
    code: "invalid_json",
    title: "Malformed JSON",
    detail: () => "The body is not valid UTF-8 JSON."
  },
  InvalidRequest: {
    status: 400,
    code: "invalid_request",
    title: "Invalid request",
    detail: (e) => `${e.errors.length} field${e.errors.length === 1 ? " is" : "s are"} invalid.`,
    errors: (e) => e.errors
  }
}
