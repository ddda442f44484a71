import * as Schema from "effect/Schema"
import type { Forbidden, IdentityProviderUnavailable, InvalidAuth, TokenRejected } from "../auth/errors"
import type { CallReverted, UnsupportedChain } from "../chain/errors"
import type { ChainUnavailable } from "../chain/networks"
import type { TxNotFound } from "../kernel/errors"
import type { ChallengeRequired, InvalidPhone, OtpInvalid, RateLimited, SmsDeliveryFailed } from "../otp/errors"
import type {
  AccountNotFound,
  InsufficientBalance,
  InvalidApiKey,
  NoPayoutPlan,
  NothingToDisperse,
  PayoutNotFound,
  UnknownNetwork
} from "../payout/errors"
import type { StoreUnavailable } from "../state/errors"
import type { IdempotencyInFlight } from "../state/IdempotencyStore"
import type { IndexSyncing, InvalidAddress, PriceUnavailable, SweeperNotConfigured } from "../sweeper/errors"
import type { IdempotencyKeyReused, OutcomeUnknown } from "./idempotency"

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

/** One field-level problem found while decoding a request. */
export const FieldProblem = Schema.Struct({
  /** A JSON Pointer (RFC 6901) to the field, e.g. `/to/1`. */
  path: Schema.String,
  message: Schema.String
})
/** One field-level problem found while decoding a request. */
export type FieldProblem = typeof FieldProblem.Type

/** The body, path or query does not have the shape the route needs. Answered 400 `invalid_request`. */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  errors: Schema.Array(FieldProblem)
}) {}

/** Every error the gateway answers with a problem; anything else is a defect (500). */
export type GatewayError =
  | RouteNotFound
  | MethodNotAllowed
  | UnsupportedMediaType
  | PayloadTooLarge
  | BodyIncomplete
  | BodyRequired
  | MalformedJson
  | InvalidRequest
  | InvalidPhone
  | OtpInvalid
  | RateLimited
  | ChallengeRequired
  | SmsDeliveryFailed
  | StoreUnavailable
  | TokenRejected
  | InvalidAuth
  | Forbidden
  | IdentityProviderUnavailable
  | UnsupportedChain
  | CallReverted
  | TxNotFound
  | ChainUnavailable
  | IdempotencyKeyReused
  | IdempotencyInFlight
  | OutcomeUnknown
  | InvalidApiKey
  | UnknownNetwork
  | AccountNotFound
  | NoPayoutPlan
  | NothingToDisperse
  | InsufficientBalance
  | PayoutNotFound
  | InvalidAddress
  | SweeperNotConfigured
  | PriceUnavailable
  | IndexSyncing

/** How one error is answered: status, stable code, title, and what else it may carry. */
export interface ProblemMapping<E> {
  readonly status: number
  readonly code: string
  readonly title: string
  readonly detail: (error: E) => string
  readonly headers?: (error: E) => Readonly<Record<string, string>>
  readonly errors?: (error: E) => ReadonlyArray<FieldProblem>
  /** RFC 9457 extension members (e.g. the failing call of a reverted batch). */
  readonly extensions?: (error: E) => Readonly<Record<string, string | number>>
}

const CLOSE: Readonly<Record<string, string>> = { connection: "close" }

type ProblemTable = { readonly [Tag in GatewayError["_tag"]]: ProblemMapping<Extract<GatewayError, { _tag: Tag }>> }

/**
 * The one table from error to answer (DESIGN §2). Details are fixed sentences: they never echo input,
 * so no code, key or token can reach a response body.
 */
export const problemTable: ProblemTable = {
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
  },
  InvalidPhone: {
    status: 400,
    code: "invalid_phone",
    title: "Invalid phone number",
    detail: (e) => `Use a US or Canadian number with the +1 prefix: ${e.reason}.`
  },
  OtpInvalid: {
    status: 401,
    code: "otp_invalid",
    title: "Invalid code",
    detail: () => "The code is wrong, expired or already used. Request a new one."
  },
  RateLimited: {
    status: 429,
    code: "rate_limited",
    title: "Too many requests",
    detail: (e) => `Try again in ${e.retryAfterSeconds} seconds.`,
    headers: (e) => ({ "retry-after": String(e.retryAfterSeconds) })
  },
  ChallengeRequired: {
    status: 403,
    code: "challenge_required",
    title: "Challenge required",
    detail: () => "Solve the sign-in challenge and send its answer in the challenge field."
  },
  SmsDeliveryFailed: {
    status: 502,
    code: "sms_delivery_failed",
    title: "SMS delivery failed",
    detail: () => "The code could not be sent. Try again."
  },
  StoreUnavailable: {
    status: 503,
    code: "store_unavailable",
    title: "Service unavailable",
    detail: () => "State storage is unavailable. Try again shortly.",
    headers: () => ({ "retry-after": "1" })
  },
  TokenRejected: {
    status: 401,
    code: "invalid_token",
    title: "Invalid token",
    detail: () => "The token is invalid or expired.",
    headers: () => ({ "www-authenticate": 'Bearer error="invalid_token"' })
  },
  InvalidAuth: {
    status: 401,
    code: "invalid_auth",
    title: "Invalid user authentication",
    detail: (e) => `The auth token does not prove the user: ${e.reason}.`
  },
  Forbidden: { status: 403, code: "forbidden", title: "Forbidden", detail: (e) => `Not allowed: ${e.reason}.` },
  IdentityProviderUnavailable: {
    status: 503,
    code: "identity_provider_unavailable",
    title: "Identity provider unavailable",
    detail: (e) => `The key set of the identity provider "${e.provider}" could not be fetched. Try again shortly.`,
    headers: () => ({ "retry-after": "5" })
  },
  UnsupportedChain: {
    status: 400,
    code: "unsupported_chain",
    title: "Unsupported chain",
    detail: (e) => `This gateway does not serve the chain "${e.chain}".`
  },
  CallReverted: {
    status: 422,
    code: "call_reverted",
    title: "Call would revert",
    detail: (e) =>
      e.index >= 0 ? `Call ${e.index} would revert: ${e.reason}.` : `The batch would revert: ${e.reason}.`,
    extensions: (e) => ({ index: e.index, reason: e.reason })
  },
  TxNotFound: {
    status: 404,
    code: "tx_not_found",
    title: "Transaction not found",
    detail: () => "No such transaction."
  },
  ChainUnavailable: {
    status: 503,
    code: "upstream_unavailable",
    title: "Chain node unavailable",
    detail: (e) => `The node of "${e.network}" did not answer properly; nothing was sent. Try again shortly.`,
    headers: () => ({ "retry-after": "5" })
  },
  IdempotencyKeyReused: {
    status: 422,
    code: "idempotency_key_reused",
    title: "Idempotency key reused",
    detail: () => "This Idempotency-Key was used with another request."
  },
  IdempotencyInFlight: {
    status: 409,
    code: "idempotency_in_flight",
    title: "Request in progress",
    detail: () =>
      "The first request with this Idempotency-Key is still running and has sent nothing yet; nothing was sent. Retry shortly.",
    headers: () => ({ "retry-after": "1" })
  },
  OutcomeUnknown: {
    status: 502,
    code: "outcome_unknown",
    title: "Sent; outcome unknown",
    detail: () =>
      "The transaction was recorded and may have been sent, but its state could not be read. Retry with the same Idempotency-Key or read it by id; do not send it again without the key.",
    headers: () => ({ "retry-after": "5" }),
    extensions: (e) => ({ id: e.id, txHash: e.txHash })
  },
  InvalidApiKey: {
    status: 401,
    code: "invalid_api_key",
    title: "Invalid API key",
    detail: () => "Send a valid, unrevoked key in the X-API-KEY header."
  },
  UnknownNetwork: {
    status: 404,
    code: "unknown_network",
    title: "Unknown network",
    detail: (e) => `This gateway does not serve the network "${e.network}".`
  },
  AccountNotFound: {
    status: 404,
    code: "account_not_found",
    title: "Account not found",
    detail: () => "No automation account at this address on this network."
  },
  NoPayoutPlan: {
    status: 422,
    code: "no_payout_plan",
    title: "No payout plan",
    detail: () => "The account has no payout plan; send assets, amounts and recipients."
  },
  NothingToDisperse: {
    status: 422,
    code: "nothing_to_disperse",
    title: "Nothing to disperse",
    detail: (e) => `${e.available} is available (balance less reserve); the minimum payout is ${e.minimum}.`,
    extensions: (e) => ({ available: e.available, minimum: e.minimum })
  },
  InsufficientBalance: {
    status: 422,
    code: "insufficient_balance",
    title: "Insufficient balance",
    detail: (e) => `The payout needs ${e.requested} of ${e.asset}; the account holds ${e.available}.`,
    extensions: (e) => ({ asset: e.asset, requested: e.requested, available: e.available })
  },
  PayoutNotFound: {
    status: 404,
    code: "payout_not_found",
    title: "Payout not found",
    detail: () => "No such payout for this account."
  },
  InvalidAddress: {
    status: 400,
    code: "invalid_address",
    title: "Invalid address",
    detail: () => "Give exactly one Ethereum address: 0x and 40 hex digits (mixed case must carry its EIP-55 checksum)."
  },
  SweeperNotConfigured: {
    status: 404,
    code: "sweeper_not_configured",
    title: "Dust-sweeping lookups not configured",
    detail: () => "This gateway does not serve dust-sweeping lookups."
  },
  PriceUnavailable: {
    status: 503,
    code: "price_unavailable",
    title: "Prices unavailable",
    detail: () => "The price source did not answer properly. Try again shortly.",
    headers: () => ({ "retry-after": "5" })
  },
  IndexSyncing: {
    status: 503,
    code: "index_syncing",
    title: "Order index catching up",
    detail: () => "The order index is catching up with the chain. Try again shortly.",
    headers: () => ({ "retry-after": "2" })
  }
}
