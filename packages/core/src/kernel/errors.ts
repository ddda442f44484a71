import * as Schema from "effect/Schema"
import type { ProblemSlice } from "../internal/problem"

/** No transaction with this id is visible to the caller. Answered 404 `tx_not_found`. */
export class TxNotFound extends Schema.TaggedError<TxNotFound>()("TxNotFound", {}) {}

/** A batch asked for DELEGATECALLs (`delegatecall: 1`), which wallets never run. Answered 400 `delegatecall_unsupported`. */
export class DelegatecallUnsupported extends Schema.TaggedError<DelegatecallUnsupported>()(
  "DelegatecallUnsupported",
  {}
) {}

/** The errors of wallet transactions (beyond those of the chain and of authentication). */
export type KernelError = TxNotFound | DelegatecallUnsupported

/** How wallet transactions' own errors are answered. */
export const kernelProblems: ProblemSlice<KernelError> = {
  TxNotFound: {
    status: 404,
    code: "tx_not_found",
    title: "Transaction not found",
    detail: () => "No such transaction."
  },
  DelegatecallUnsupported: {
    status: 400,
    code: "delegatecall_unsupported",
    title: "DELEGATECALL not supported",
    detail: () =>
      "Wallets run calls, never DELEGATECALLs (foreign code with the wallet's own storage could take it over). Send delegatecall 0."
  }
}
