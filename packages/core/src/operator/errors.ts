import * as Schema from "effect/Schema"
import type { UnknownIdentityProvider } from "../auth/errors"
import type { ProblemSlice } from "../internal/problem"

/** No app with this client id (never registered, or revoked). Answered 404 `app_not_found`. */
export class AppNotFound extends Schema.TaggedError<AppNotFound>()("AppNotFound", {
  clientId: Schema.String
}) {}

/** No API key with this id. Answered 404 `api_key_not_found`. */
export class ApiKeyNotFound extends Schema.TaggedError<ApiKeyNotFound>()("ApiKeyNotFound", {
  id: Schema.String
}) {}

/** An operator's input that cannot be acted on (a malformed address, a bad budget, …). Answered 400. */
export class InvalidOperatorInput extends Schema.TaggedError<InvalidOperatorInput>()("InvalidOperatorInput", {
  /** Which input (`accounts`, `gasPerDay`, …). */
  field: Schema.String,
  /** What is wrong, in a fixed sentence that never echoes the input. */
  reason: Schema.String
}) {}

/** The errors of the operator module. */
export type OperatorError = AppNotFound | ApiKeyNotFound | InvalidOperatorInput | UnknownIdentityProvider

/** How the operator module's errors are answered. */
export const operatorProblems: ProblemSlice<OperatorError> = {
  AppNotFound: {
    status: 404,
    code: "app_not_found",
    title: "App not found",
    detail: () => "No app with this client id."
  },
  ApiKeyNotFound: {
    status: 404,
    code: "api_key_not_found",
    title: "API key not found",
    detail: () => "No API key with this id."
  },
  InvalidOperatorInput: {
    status: 400,
    code: "invalid_operator_input",
    title: "Invalid input",
    detail: (e) => `${e.field}: ${e.reason}.`,
    errors: (e) => [{ path: `/${e.field}`, message: e.reason }]
  },
  UnknownIdentityProvider: {
    status: 400,
    code: "unknown_identity_provider",
    title: "Unknown identity provider",
    detail: () => "The deployment has not registered every identity provider named; register it first.",
    extensions: (e) => ({ providers: e.providers.join(",") })
  }
}
