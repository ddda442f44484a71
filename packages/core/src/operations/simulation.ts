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
  /** The gas each call used, as its own transaction (in `calls`' order; empty when `insufficientFunds`). */
  readonly callsGas: ReadonlyArray<bigint>
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
  if (simulated === undefined) return { revert: undefined, gasUsed: 0n, callsGas: [], insufficientFunds: true }
  const [block] = simulated
  if (block === undefined) throw new Error("eth_simulateV1 answered no block")
  const results = block.calls
  const callsGas = results.map((result) => result.gasUsed)
  const gasUsed = callsGas.reduce((sum, gas) => sum + gas, 0n)
  const index = results.findIndex((result) => result.status === "failure")
  const failed = results[index]
  if (failed === undefined) return { revert: undefined, gasUsed, callsGas, insufficientFunds: false }
  // Each call is given the block's gas left by the calls before it.
  const given = block.gasLimit - results.slice(0, index).reduce((sum, result) => sum + result.gasUsed, 0n)
  const halted = failed.data === "0x" && failed.gasUsed >= given
  return { revert: { index, data: failed.data, halted }, gasUsed, callsGas, insufficientFunds: false }
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

// The EVM's prices (EIP-2929, the CALL opcode) the simulation of each call as a transaction of its own does not show.
const TRANSACTION_BASE_GAS = 21_000n
const COLD_ACCOUNT_ACCESS_GAS = 2_600n
const WARM_ACCOUNT_ACCESS_GAS = 100n
const CALL_VALUE_GAS = 9_000n
const NEW_ACCOUNT_GAS = 25_000n

/**
 * The Safe's path around a batch, besides its calls: the Safe4337Module's `executeUserOpWithErrorString`, the Safe's
 * `execTransactionFromModule` and its SafeL2 event, MultiSendCallOnly's loop. About 30,000 gas and 1,000 a call: 116,814
 * gas outside MultiSend around 87 transfers on the devnet ({@link SAFE_PATH_GAS_PER_CALL}).
 */
const SAFE_PATH_GAS = 30_000n

/** The Safe's path's gas for each call of a batch (MultiSend's loop, the bytes the event logs). */
const SAFE_PATH_GAS_PER_CALL = 1_000n

/**
 * The calls that nest between `callGasLimit` and a batch's calls (the Safe, its fallback handler the Safe4337Module,
 * `execTransactionFromModule`, MultiSendCallOnly, the call), each passing on at most 63/64 of the gas it has (EIP-150).
 */
const NESTED_CALLS = 5n

/**
 * The least `callGasLimit` a batch needs when it executes in the chain's state now, as {@link simulateBatch} saw it
 * (`callsGas`): every address it calls cold (EIP-2929: 2,600 gas the first time, 100 after), every value sent to an
 * account that does not exist (25,000 to create it and 9,000 for the value, counted for every call with value whether
 * or not its recipient exists: the simulation of a transaction cannot tell), what each call did besides the 21,000 of a
 * transaction, the Safe's path ({@link SAFE_PATH_GAS}) and what the nested calls keep back. A bundler's estimate is
 * the least gas the calls needed after simulating the operations pending in its mempool it deems related (alto 0.0.20:
 * every one with the same paymaster, any tenant's), with no margin: those may warm or create what the batch touches, and
 * the batch may execute before them. Over-counting costs 10 % of the gas left unused (EntryPoint v0.7's penalty).
 */
export const batchCallGasFloor = (calls: ReadonlyArray<SafeCall>, callsGas: ReadonlyArray<bigint>): bigint => {
  const touched = new Set<string>()
  let gas = SAFE_PATH_GAS
  for (const [index, call] of calls.entries()) {
    const simulated = callsGas[index] ?? 0n
    const address = call.to.toLowerCase()
    gas += simulated > TRANSACTION_BASE_GAS ? simulated - TRANSACTION_BASE_GAS : 0n
    gas += touched.has(address) ? WARM_ACCOUNT_ACCESS_GAS : COLD_ACCOUNT_ACCESS_GAS
    gas += call.value > 0n ? CALL_VALUE_GAS + NEW_ACCOUNT_GAS : 0n
    gas += SAFE_PATH_GAS_PER_CALL
    touched.add(address)
  }
  const kept = 63n ** NESTED_CALLS
  return (gas * 64n ** NESTED_CALLS + kept - 1n) / kept
}
