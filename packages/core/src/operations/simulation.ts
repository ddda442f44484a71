import { type Address, BaseError, type Hex, InsufficientFundsError } from "viem"
import { entryPoint07Abi } from "viem/account-abstraction"
import type { NetworkReads } from "../chain/networkClient"
import type { SafeCall } from "./safeAccount"

// What the node says of a batch and an account's nonce: the calls simulated in sequence, the next nonce sequence.

/** The first call of a batch that reverts, with its revert data, when the calls run one after another. */
interface BatchRevert {
  /** Zero-based index of the failing call. */
  readonly index: number
  /** The call's revert data (`0x` when it gave none). */
  readonly data: Hex
  /**
   * The call halted exceptionally (out of gas, an invalid opcode): no revert data and all the gas it was given used,
   * which a revert never uses.
   */
  readonly halted: boolean
}

/** What simulating a batch's calls in sequence shows: the first that reverts, if any, and the gas they used. */
export interface BatchSimulation {
  readonly revert: BatchRevert | undefined
  /** The gas the calls used one after another: a lower bound of the operation's execution gas. */
  readonly gasUsed: bigint
  /**
   * The node refused the simulation because a call sends more ETH than `sender` holds by then (nodes answer this for
   * the whole simulation, not per call); `revert` is then undefined.
   */
  readonly insufficientFunds: boolean
}

/**
 * Simulates `calls` in sequence from `sender` (`eth_simulateV1`, one round trip) on `blockNumber` (the latest block
 * when absent): the first call that reverts and the gas the calls used. MultiSendCallOnly 1.4.1 reverts without
 * data, so a failed batch of several calls is explained this way: before sending, or on the block before the one
 * that included the failed operation.
 */
export const simulateBatch = async (
  client: Pick<NetworkReads, "simulateBlocks">,
  sender: Address,
  calls: ReadonlyArray<SafeCall>,
  blockNumber?: bigint
): Promise<BatchSimulation> => {
  // One simulated block of the calls, each from `sender` (viem's `simulateCalls` adds asset tracing on top of this).
  const simulated = await client
    .simulateBlocks({
      blocks: [{ calls: calls.map((call) => ({ from: sender, to: call.to, value: call.value, data: call.data })) }],
      ...(blockNumber === undefined ? {} : { blockNumber })
    })
    .catch((error: unknown) => {
      // viem names the node's "insufficient funds" answer (geth, anvil, reth) InsufficientFundsError.
      if (error instanceof BaseError && error.walk((e) => e instanceof InsufficientFundsError) !== null)
        return undefined
      throw error
    })
  if (simulated === undefined) return { revert: undefined, gasUsed: 0n, insufficientFunds: true }
  const [block] = simulated
  if (block === undefined) throw new Error("eth_simulateV1 answered no block")
  const results = block.calls
  const gasUsed = results.reduce((sum, result) => sum + result.gasUsed, 0n)
  const index = results.findIndex((result) => result.status === "failure")
  const failed = results[index]
  if (failed === undefined) return { revert: undefined, gasUsed, insufficientFunds: false }
  // Each call is given the block's gas left by the calls before it.
  const given = block.gasLimit - results.slice(0, index).reduce((sum, result) => sum + result.gasUsed, 0n)
  const halted = failed.data === "0x" && failed.gasUsed >= given
  return { revert: { index, data: failed.data, halted }, gasUsed, insufficientFunds: false }
}

/** The next sequence of `sender` on nonce `key` at the EntryPoint (`getNonce`): 0 for a key never used. */
export const readNonceSequence = async (
  client: Pick<NetworkReads, "readContract">,
  entryPoint: Address,
  sender: Address,
  key: bigint
): Promise<bigint> => {
  const nonce = await client.readContract({
    address: entryPoint,
    abi: entryPoint07Abi,
    functionName: "getNonce",
    args: [sender, key]
  })
  return nonce & ((1n << 64n) - 1n)
}
