import { type Abi, decodeErrorResult, type Hex } from "viem"
import { sweeperArtifact, testTokenArtifact } from "./artifacts"

// The custom errors of walletgate's own contracts (the dust sweeper, the test token), to name them when decoded.
const knownErrors: Abi = [...sweeperArtifact.abi, ...testTokenArtifact.abi].filter((item) => item.type === "error")

/** A readable revert reason: `Error(string)`'s message, a panic code, a known custom error, or the raw data. */
export const decodeRevertReason = (data: Hex): string => {
  if (data === "0x") return "reverted without a reason"
  try {
    const decoded = decodeErrorResult({ abi: knownErrors, data })
    if (decoded.errorName === "Error") return String(decoded.args?.[0] ?? "")
    if (decoded.errorName === "Panic") return `panic 0x${BigInt(String(decoded.args?.[0] ?? 0)).toString(16)}`
    const args = (decoded.args ?? []).map((arg) => String(arg)).join(", ")
    return `${decoded.errorName}(${args})`
  } catch {
    return data.length > 202 ? `${data.slice(0, 202)}…` : data
  }
}
