import { type Abi, decodeErrorResult, type Hex } from "viem"
import { sweeperArtifact } from "../chain/artifacts"

// The custom errors of walletgate's own production contract (the dust sweeper), to name them when decoded.
const knownErrors: Abi = sweeperArtifact.abi.filter((item) => item.type === "error")

/**
 * The most revert data decoded, in bytes: a contract chooses its revert data (a reverting token sent 1 MB in the
 * test), so more is named by its size and first bytes, never decoded or answered whole.
 */
const MAX_REVERT_DATA_BYTES = 4096

/** The longest revert reason answered or logged, in characters; a longer one is cut and ends with `…`. */
const MAX_REVERT_REASON_CHARS = 256

/** The revert data shown when it is not decoded: its first 64 bytes. */
const shownBytes = 64

/**
 * A readable revert reason, at most {@link MAX_REVERT_REASON_CHARS} characters: `Error(string)`'s message, a panic
 * code, a known custom error, or the raw data (its first bytes when longer, or over {@link MAX_REVERT_DATA_BYTES}).
 */
export const decodeRevertReason = (data: Hex): string => {
  if (data === "0x") return "reverted without a reason"
  const bytes = (data.length - 2) / 2
  if (bytes > MAX_REVERT_DATA_BYTES) {
    return `${bytes} bytes of revert data (over ${MAX_REVERT_DATA_BYTES}, not decoded): ${data.slice(0, 2 + shownBytes * 2)}…`
  }
  return capped(readable(data))
}

const readable = (data: Hex): string => {
  try {
    const decoded = decodeErrorResult({ abi: knownErrors, data })
    if (decoded.errorName === "Error") return String(decoded.args?.[0] ?? "")
    if (decoded.errorName === "Panic") return `panic 0x${BigInt(String(decoded.args?.[0] ?? 0)).toString(16)}`
    const args = (decoded.args ?? []).map((arg) => String(arg)).join(", ")
    return `${decoded.errorName}(${args})`
  } catch {
    return data
  }
}

const capped = (reason: string): string =>
  reason.length > MAX_REVERT_REASON_CHARS ? `${reason.slice(0, MAX_REVERT_REASON_CHARS - 1)}…` : reason
