import * as Effect from "effect/Effect"
import type { Address } from "viem"
import { type Network, rpc, withinDeadline } from "../chain/networks"
import { CallReverted } from "./errors"
import { haltedReason, insufficientBalanceReason } from "./outcomes"
import { decodeRevertReason } from "./revertReason"
import type { SafeAccount, SafeCall } from "./safeAccount"
import { readAccountChainState } from "./safeOperation"
import { batchCallGasFloor, simulateBatch } from "./simulation"

// What the pipeline reads of a Safe before it prepares an operation: its state, the calls simulated, its deployment.

/**
 * The Safe's code, the block and the fees, and (concurrently) the calls simulated in sequence, in one round trip: a
 * reverting call, or one sending more ETH than the Safe holds, is `CallReverted`. With the gas the calls used and the
 * least call gas they need in the chain's state now ({@link batchCallGasFloor}).
 */
export const inspect = (network: Network, account: SafeAccount, calls: ReadonlyArray<SafeCall>) =>
  rpc(network, "inspect", () =>
    Promise.all([
      readAccountChainState(network.publicClient, account.address),
      simulateBatch(network.publicClient, account.address, calls)
    ])
  ).pipe(
    Effect.flatMap(([state, simulated]) => {
      if (simulated.insufficientFunds) return lackingBalance(network, account.address, calls)
      const revert = simulated.revert
      if (revert === undefined)
        return Effect.succeed({
          state,
          executionGas: simulated.gasUsed,
          callGasFloor: batchCallGasFloor(calls, simulated.callsGas)
        })
      const reason = revert.halted ? haltedReason : decodeRevertReason(revert.data)
      return Effect.fail(new CallReverted({ index: revert.index, reason }))
    })
  )

/**
 * The call that sends more ETH than the Safe holds: the first whose value, with the values before it, is above
 * the balance (the batch as a whole when the calls spend the ETH otherwise). Retrying never helps until the
 * wallet is funded, so it is the caller's `call_reverted`, never a node's 503.
 */
const lackingBalance = (network: Network, address: Address, calls: ReadonlyArray<SafeCall>) =>
  rpc(network, "getBalance", () => network.publicClient.getBalance({ address })).pipe(
    Effect.flatMap((balance) => {
      let needs = 0n
      const index = calls.findIndex((call) => {
        needs += call.value
        return needs > balance
      })
      return Effect.fail(
        index < 0
          ? new CallReverted({ index: -1, reason: `insufficient balance: holds ${balance} wei` })
          : new CallReverted({ index, reason: insufficientBalanceReason(needs, balance) })
      )
    })
  )

/** Whether `address` has code on the network. */
export const isDeployed = (network: Network, address: Address) =>
  rpc(network, "getCode", () => network.publicClient.getCode({ address })).pipe(
    Effect.map((code) => code !== undefined && code !== "0x")
  )

/**
 * Waits, within the request, until the Safe has code: what the next operations of the account need. False when it
 * has none within `deployWaitMs`.
 */
export const awaitDeployment = (network: Network, address: Address, deployWaitMs: number) =>
  Effect.gen(function* () {
    while (!(yield* isDeployed(network, address))) {
      yield* Effect.sleep(network.publicClient.pollingInterval)
    }
    return true
  }).pipe(
    withinDeadline(network, "awaitDeployment", deployWaitMs),
    Effect.catch((error) =>
      Effect.logWarning("walletgate: the deploying operation is not included yet; the deploy lock is freed").pipe(
        Effect.annotateLogs({ network: network.slug, account: address, cause: error.cause }),
        Effect.as(false)
      )
    )
  )
