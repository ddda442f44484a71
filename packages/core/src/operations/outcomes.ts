/**
 * Every way a batch can fail before it executes: what the simulation of its calls shows, and what a bundler answers
 * (ERC-7769 error codes, and the EntryPoint's `AAnn` reason in the message). The one table that decides who is to
 * blame: the caller's batch (4xx, retrying the same request never helps), the gateway's own sponsorship or setup
 * (502, the operator must act), or an upstream that did not answer properly (503, retrying helps). A network sponsored
 * by an ERC-7677 paymaster service adds the service's answers (`serviceCodes`).
 */
export type OperationOutcome =
  | "insufficient_balance"
  | "reverted"
  | "halted"
  | "execution_reverted"
  | "validation_refused"
  | "setup_refused"
  | "account_deploying"
  | "bundler_busy"
  | "node_unavailable"
  | "bundler_unavailable"
  | "sponsorship_refused"
  | "paymaster_unavailable"

/** One row of {@link operationOutcomes}. */
export interface OutcomeRow {
  /** The tagged error the outcome fails with; its status and stable code are that tag's row of `chainProblems`. */
  readonly error:
    | "CallReverted"
    | "BundlerRejected"
    | "BundlerRefusedSetup"
    | "BundlerUnavailable"
    | "ChainUnavailable"
    | "AccountDeploying"
    | "BundlerBusy"
    | "SponsorshipRefused"
    | "PaymasterUnavailable"
  /** The bundler's ERC-7769 codes that mean this outcome when the message names no `AAnn` reason. */
  readonly bundlerCodes: ReadonlyArray<number>
  /** The `AAnn` reasons (by their first digit: `AA2x` is "2") that mean this outcome, whatever the code. */
  readonly aaClasses: ReadonlyArray<string>
  /** The paymaster service's JSON-RPC error codes that mean this outcome (`*`: any code no other row names). */
  readonly serviceCodes?: ReadonlyArray<number | "*">
  /** Whether the same request can pass later: never, once the wallet or the operator changed something, or soon. */
  readonly retry: "never" | "after funding" | "after the operator acts" | "yes"
}

/** The one table: each outcome, the error it is answered with, and what a bundler's answer must say to be it. */
export const operationOutcomes: { readonly [K in OperationOutcome]: OutcomeRow } = {
  // The simulation (`eth_simulateV1`) of the calls in sequence, before anything is signed.
  /** A call sends more ETH than the wallet holds by then: `call_reverted`, "needs X wei, holds Y wei". */
  insufficient_balance: { error: "CallReverted", bundlerCodes: [], aaClasses: [], retry: "after funding" },
  /** A call reverts: `call_reverted` with its decoded reason. */
  reverted: { error: "CallReverted", bundlerCodes: [], aaClasses: [], retry: "never" },
  /** A call halts exceptionally (out of gas, an invalid opcode): all its gas used and no revert data. */
  halted: { error: "CallReverted", bundlerCodes: [], aaClasses: [], retry: "never" },
  // The bundler's answers (estimate and send).
  /** The operation's execution reverts in the bundler's estimate (-32521). */
  execution_reverted: { error: "CallReverted", bundlerCodes: [-32521], aaClasses: [], retry: "never" },
  /**
   * Validation refused what the request makes the operation be: the account's validation (AA1x deployment, AA2x
   * account: prefund, signature, nonce; AA4x verification gas), banned opcodes, expiry, signature, invalid fields.
   */
  validation_refused: {
    error: "BundlerRejected",
    bundlerCodes: [-32500, -32502, -32503, -32507, -32602],
    aaClasses: ["1", "2", "4"],
    retry: "never"
  },
  /**
   * The gateway's own part is refused: its paymaster (AA3x, its post-op AA5x, -32501, a deposit too low -32508), the
   * reputation or stake of its entities (-32504, -32505), an aggregator (-32506), or the bundle itself (AA9x).
   */
  setup_refused: {
    error: "BundlerRefusedSetup",
    bundlerCodes: [-32501, -32504, -32505, -32506, -32508],
    aaClasses: ["3", "5", "9"],
    retry: "after the operator acts"
  },
  /**
   * A deploying operation refused with AA10 while the Safe still has no code after the deploy wait: another deploying
   * operation of it is about to land. Decided by the pipeline (an AA10 after which the Safe has code is signed again
   * without the deployment), never by the bundler's answer alone (its codes and classes name no row here).
   */
  account_deploying: { error: "AccountDeploying", bundlerCodes: [], aaClasses: [], retry: "yes" },
  /**
   * The bundler refused for a while, not for what the operation is: its fees below the bundler's current minimum
   * (the base fee rose), a replacement not priced 10 % higher, or the sender's pending operations at the mempool's
   * limit. Nothing was accepted; the same request, priced and sent again, passes (`busyRefusals`, before `AAnn`: alto
   * words the mempool limit as AA25).
   */
  bundler_busy: { error: "BundlerBusy", bundlerCodes: [], aaClasses: [], retry: "yes" },
  /** The node did not answer, timed out, or answered what is not JSON-RPC. */
  node_unavailable: { error: "ChainUnavailable", bundlerCodes: [], aaClasses: [], retry: "yes" },
  /**
   * The bundler did not answer, answered malformed JSON or an HTTP error, or failed in itself: any other code
   * (-32601 method not found, -32603 internal error, …) without an `AAnn` reason.
   */
  bundler_unavailable: { error: "BundlerUnavailable", bundlerCodes: [], aaClasses: [], retry: "yes" },
  // An ERC-7677 paymaster service's answers (stub data before the estimate, final data after the reservation).
  /**
   * The service refused to sponsor (any JSON-RPC error but those below: its policy, its budget, an unknown context):
   * the gateway's own sponsorship, as `setup_refused`.
   */
  sponsorship_refused: {
    error: "SponsorshipRefused",
    bundlerCodes: [],
    aaClasses: [],
    serviceCodes: ["*"],
    retry: "after the operator acts"
  },
  /**
   * The service did not answer, timed out, answered what is not JSON-RPC or a malformed or out-of-bounds result, or
   * failed in itself: parse error, invalid request, no such method, internal error.
   */
  paymaster_unavailable: {
    error: "PaymasterUnavailable",
    bundlerCodes: [],
    aaClasses: [],
    serviceCodes: [-32700, -32600, -32601, -32603],
    retry: "yes"
  }
}

const rows = Object.entries(operationOutcomes) as ReadonlyArray<[OperationOutcome, OutcomeRow]>

/**
 * The outcome of a bundler's JSON-RPC error: by its `AAnn` reason when the message has one (the EntryPoint's word is
 * the most precise: alto answers AA34 with -32507), else by its ERC-7769 code; any other is the bundler's failure.
 */
export const bundlerOutcome = (code: number, message: string): OperationOutcome => {
  if (code === -32521) return "execution_reverted"
  if (busyRefusal(message) !== undefined) return "bundler_busy"
  const aa = /\bAA(\d)\d\b/.exec(message)?.[1]
  const matches = (row: OutcomeRow) => (aa === undefined ? row.bundlerCodes.includes(code) : row.aaClasses.includes(aa))
  return rows.find(([, row]) => matches(row))?.[0] ?? "bundler_unavailable"
}

/**
 * What a bundler says when it refuses for a while (alto's words), each with the reason in the gateway's words: the
 * sender's parallel or queued operations at the mempool's limit, a replacement priced too low, fees under its minimum.
 */
const busyRefusals = [
  {
    words: /Maximum number of (?:parallel|queued) user ?op(?:eration)?s/i,
    reason: "the sender's pending operations are at the mempool's limit"
  },
  { words: /bump the gas price/i, reason: "a replacement must be priced 10 % higher" },
  {
    words: /(?:maxFeePerGas|maxPriorityFeePerGas) must be at least/i,
    reason: "fees under the bundler's current minimum"
  }
] as const

/** The row of {@link busyRefusals} a bundler's message matches (its first 4 KiB), if any. */
const busyRefusal = (message: string) => {
  const head = message.slice(0, 4_096)
  return busyRefusals.find((refusal) => refusal.words.test(head))
}

/** Whether a bundler's refusal says the sender's pending operations are at its mempool's limit (alto's words). */
export const mempoolLimited = (message: string): boolean => busyRefusal(message) === busyRefusals[0]

/** Why a bundler refused for a while ({@link busyRefusals}), in the gateway's words. */
export const busyReason = (message: string): string => (busyRefusal(message) ?? busyRefusals[2]).reason

/** The outcome of a paymaster service's JSON-RPC error: the row naming its code, else the row of any code. */
export const paymasterServiceOutcome = (code: number): "sponsorship_refused" | "paymaster_unavailable" =>
  operationOutcomes.paymaster_unavailable.serviceCodes?.includes(code) === true
    ? "paymaster_unavailable"
    : "sponsorship_refused"

/** What a bundler's ERC-7769 code says when its message has no `AAnn` reason. */
const codeReasons: Readonly<Record<number, string>> = {
  [-32500]: "account validation failed",
  [-32501]: "paymaster validation failed",
  [-32502]: "a banned opcode or storage access in validation",
  [-32503]: "the operation expires too soon",
  [-32504]: "an entity is throttled or banned",
  [-32505]: "an entity's stake is too low",
  [-32506]: "unsupported signature aggregator",
  [-32507]: "invalid signature",
  [-32508]: "the paymaster's deposit is too low",
  [-32521]: "execution reverted",
  [-32602]: "invalid operation fields"
}

/**
 * The reason of a bundler's refusal, at most 80 characters: the ERC-4337 reason (`AA21 didn't pay prefund`, …) in its
 * message, else what its code means, else `refused`. The rest of the message (addresses, the operation) goes to the
 * log only.
 */
export const bundlerReason = (message: string, code?: number): string => {
  const found = /\bAA\d\d\b[ \w'.,-]*/.exec(message)
  if (found !== null) return found[0].trim().slice(0, 80)
  return (code === undefined ? undefined : codeReasons[code]) ?? "refused"
}

/** The reason of a call that sends more ETH than the wallet holds (decimal wei). */
export const insufficientBalanceReason = (needsWei: bigint, holdsWei: bigint): string =>
  `insufficient balance: needs ${needsWei} wei, holds ${holdsWei} wei`

/** The reason of a call that halted exceptionally; nodes (anvil) do not tell out of gas from an invalid opcode. */
export const haltedReason = "halted: out of gas or an invalid opcode"
