import * as Schema from "effect/Schema"
import type { ProblemSlice } from "../internal/problem"

/** No transaction with this id is visible to the caller. Answered 404 `tx_not_found`. */
export class TxNotFound extends Schema.TaggedError<TxNotFound>()("TxNotFound", {}) {}

/** The errors of wallet transactions (beyond those of the chain and of authentication). */
export type KernelError = TxNotFound

/** How wallet transactions' own errors are answered. */
export const kernelProblems: ProblemSlice<KernelError> = {
  TxNotFound: {
    status: 404,
    code: "tx_not_found",
    title: "Transaction not found",
    detail: () => "No such transaction."
  }
}
