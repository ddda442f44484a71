import * as Schema from "effect/Schema"
import type { ProblemSlice } from "../internal/problem"
import { bundlerReason, busyReason } from "./outcomes"

/**
 * The bundler refused what the request makes the operation be (`AA21` prefund, `AA25` nonce, `AA10`, "already known",
 * invalid fields, …: `validation_refused` in `operationOutcomes`). Its `code` and `message` are the bundler's, for the log.
 */
export class BundlerRejected extends Schema.TaggedError<BundlerRejected>()("BundlerRejected", {
  chainId: Schema.Number,
  method: Schema.String,
  code: Schema.Number,
  message: Schema.String
}) {}

/**
 * The bundler refused the operation for a while, not for what it is (`bundler_busy` in `operationOutcomes`): its fees
 * under the bundler's current minimum, or the sender's pending operations at the mempool's limit. Nothing was
 * accepted; the same request sent again (priced anew) passes. Answered 503 `bundler_busy` with `Retry-After`.
 */
export class BundlerBusy extends Schema.TaggedError<BundlerBusy>()("BundlerBusy", {
  chainId: Schema.Number,
  method: Schema.String,
  code: Schema.Number,
  message: Schema.String
}) {}

/**
 * The bundler did not answer, answered malformed or failed in itself (any code `operationOutcomes` does not name), or
 * no bundler serves the chain. After `eth_sendUserOperation` this means "unknown":
 * the operation may have been accepted; re-sending the same signed operation is safe (it executes at most once).
 */
export class BundlerUnavailable extends Schema.TaggedError<BundlerUnavailable>()("BundlerUnavailable", {
  chainId: Schema.Number,
  method: Schema.String,
  cause: Schema.String
}) {}

/**
 * The bundler refused the gateway's own part of an operation, not the caller's: its paymaster's sponsorship or deposit
 * (AA3x), the reputation or stake of its entities, the bundle. Nothing was accepted; the operator must act.
 */
export class BundlerRefusedSetup extends Schema.TaggedError<BundlerRefusedSetup>()("BundlerRefusedSetup", {
  chainId: Schema.Number,
  method: Schema.String,
  code: Schema.Number,
  message: Schema.String
}) {}

/** Simulation showed the batch would revert; nothing was sent and no gas spent. */
export class CallReverted extends Schema.TaggedError<CallReverted>()("CallReverted", {
  /** The index of the failing call in the batch. */
  index: Schema.Int,
  /** The decoded revert reason. */
  reason: Schema.String
}) {}

/**
 * One operation needs more gas than the network allows any single batch or payout; nothing was signed or
 * sent. Answered 422 `gas_ceiling_exceeded`: the same request will never pass, make it smaller.
 */
export class GasCeilingExceeded extends Schema.TaggedError<GasCeilingExceeded>()("GasCeilingExceeded", {
  /** `batch` (a wallet transaction) or `payout`. */
  operation: Schema.Literals(["batch", "payout"]),
  /** The gas the operation would be signed for (decimal). */
  gas: Schema.String,
  /** The network's ceiling for one such operation (decimal). */
  ceiling: Schema.String
}) {}

/**
 * A gas budget of this window has no room for the operation; nothing was signed or sent. Answered 429
 * `gas_budget_exhausted` with `Retry-After` (the end of the window).
 */
export class GasBudgetExhausted extends Schema.TaggedError<GasBudgetExhausted>()("GasBudgetExhausted", {
  /**
   * Which budget: the app's, the app's day budget (its `gasPerDay`), the user's (at this app), the API key's, or the
   * whole network's.
   */
  budget: Schema.Literals(["app", "app_day", "user", "api_key", "network"]),
  retryAfterSeconds: Schema.Int
}) {}

/**
 * The network's base fee is above the most the gateway offers per gas (its fee cap); nothing was signed or sent.
 * Answered 503 `gas_price_above_cap` with `Retry-After`: the same request passes once fees fall.
 */
export class GasPriceAboveCap extends Schema.TaggedError<GasPriceAboveCap>()("GasPriceAboveCap", {
  network: Schema.String
}) {}

/**
 * A Safe's deploying operation was refused with AA10 (the Safe is being deployed: another deploying operation waits
 * in the bundler or was just included), and the Safe still had no code when the gateway stopped waiting for it.
 * Nothing was recorded or sent. Answered 503 `account_deploying` with `Retry-After`: the same request passes once the
 * deployment lands, so it is not a 4xx a client would take as final.
 */
export class AccountDeploying extends Schema.TaggedError<AccountDeploying>()("AccountDeploying", {
  network: Schema.String
}) {}

/**
 * The network's paymaster service did not answer, answered what is not a well-formed ERC-7677 answer, or failed in
 * itself; nothing was signed or sent. Answered 503 `paymaster_unavailable`: retrying helps once it answers again.
 */
export class PaymasterUnavailable extends Schema.TaggedError<PaymasterUnavailable>()("PaymasterUnavailable", {
  network: Schema.String,
  /** What failed, for the operator's log (never the service's URL: it may hold an API key). */
  cause: Schema.String
}) {}

/**
 * The network's paymaster service refused to sponsor the operation (a JSON-RPC error: its policy, its budget, an
 * unknown context); nothing was signed or sent. Answered 502 `upstream_refused`: the operator (or the service's
 * policy) must change before the same request passes.
 */
export class SponsorshipRefused extends Schema.TaggedError<SponsorshipRefused>()("SponsorshipRefused", {
  network: Schema.String,
  code: Schema.Number,
  /** The service's message, at most 120 printable characters. */
  message: Schema.String
}) {}

/** The errors of the transaction pipeline: simulation, gas limits, the bundler and the paymaster. */
export type OperationError =
  | BundlerBusy
  | BundlerRejected
  | BundlerUnavailable
  | BundlerRefusedSetup
  | CallReverted
  | GasCeilingExceeded
  | GasBudgetExhausted
  | GasPriceAboveCap
  | AccountDeploying
  | PaymasterUnavailable
  | SponsorshipRefused

/** How the pipeline's errors are answered; which outcome is which error is `operationOutcomes` (outcomes.ts). */
export const operationProblems: ProblemSlice<OperationError> = {
  CallReverted: {
    status: 422,
    code: "call_reverted",
    title: "Call would revert",
    detail: (e) =>
      e.index >= 0 ? `Call ${e.index} would revert: ${e.reason}.` : `The batch would revert: ${e.reason}.`,
    extensions: (e) => ({ index: e.index, reason: e.reason })
  },
  GasCeilingExceeded: {
    status: 422,
    code: "gas_ceiling_exceeded",
    title: "Gas ceiling exceeded",
    detail: (e) =>
      `This ${e.operation} needs ${e.gas} gas; one ${e.operation} may use at most ${e.ceiling} here. Nothing was sent.`,
    extensions: (e) => ({ operation: e.operation, gas: e.gas, ceiling: e.ceiling })
  },
  GasBudgetExhausted: {
    status: 429,
    code: "gas_budget_exhausted",
    title: "Gas budget exhausted",
    detail: (e) =>
      `The ${e.budget.replace("_", " ")} gas budget of this window is spent. Nothing was sent. Try again in ${e.retryAfterSeconds} seconds.`,
    headers: (e) => ({ "retry-after": String(e.retryAfterSeconds) }),
    extensions: (e) => ({ budget: e.budget })
  },
  GasPriceAboveCap: {
    status: 503,
    code: "gas_price_above_cap",
    title: "Gas price above the cap",
    detail: (e) =>
      `Gas on "${e.network}" costs more than this gateway offers now; nothing was signed or sent. Try again later.`,
    headers: () => ({ "retry-after": "30" })
  },
  BundlerRejected: {
    status: 422,
    code: "operation_rejected",
    title: "Operation rejected",
    detail: (e) =>
      `The bundler refused the operation (${bundlerReason(e.message, e.code)}); nothing was executed. A self-paid wallet needs ETH for its gas.`,
    extensions: (e) => ({ reason: bundlerReason(e.message, e.code) })
  },
  BundlerRefusedSetup: {
    status: 502,
    code: "upstream_refused",
    title: "Refused upstream",
    detail: (e) =>
      `The network's bundler refused the gateway's own part of the operation (${bundlerReason(e.message, e.code)}); nothing was executed. The operator must act; retrying will not help until then.`,
    extensions: (e) => ({ reason: bundlerReason(e.message, e.code) })
  },
  BundlerBusy: {
    status: 503,
    code: "bundler_busy",
    title: "Bundler busy",
    detail: (e) =>
      `The network's bundler refused the operation for now (${busyReason(e.message)}); nothing was sent. Try again shortly.`,
    headers: () => ({ "retry-after": "5" }),
    extensions: (e) => ({ reason: busyReason(e.message) })
  },
  BundlerUnavailable: {
    status: 503,
    code: "bundler_unavailable",
    title: "Bundler unavailable",
    detail: () => "The network's bundler did not answer; nothing was sent. Try again shortly.",
    headers: () => ({ "retry-after": "5" })
  },
  AccountDeploying: {
    status: 503,
    code: "account_deploying",
    title: "Wallet being deployed",
    detail: () =>
      "The wallet is being deployed by another operation that has not landed yet; nothing was sent. Try again shortly.",
    headers: () => ({ "retry-after": "5" })
  },
  SponsorshipRefused: {
    status: 502,
    code: "upstream_refused",
    title: "Refused upstream",
    detail: (e) =>
      `The network's paymaster service refused to sponsor the operation (${e.message || `error ${e.code}`}); nothing was signed or sent. The operator must act; retrying will not help until then.`,
    extensions: (e) => ({ reason: e.message || `error ${e.code}` })
  },
  PaymasterUnavailable: {
    status: 503,
    code: "paymaster_unavailable",
    title: "Paymaster service unavailable",
    detail: () =>
      "The network's paymaster service did not answer properly; nothing was signed or sent. Try again shortly.",
    headers: () => ({ "retry-after": "5" })
  }
}
