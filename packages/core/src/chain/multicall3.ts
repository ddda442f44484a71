import * as Effect from "effect/Effect"
import type { Address } from "viem"
import type { ChainUnavailable } from "./errors"
import { type Network, rpc } from "./networks"

/** Multicall3's address on every chain that has it, deployed there by its presigned transaction (multicall3.com). */
export const multicall3Address: Address = "0xcA11bde05977b3631167028862bE2a173976CA11"

/**
 * How a batched read reaches Multicall3 on a network (viem's `multicall` options): the contract at its canonical
 * address, or Multicall3's code run inside the `eth_call` itself (viem's deployless multicall) where it is absent.
 */
export type MulticallRoute = { readonly multicallAddress: Address } | { readonly deployless: true }

/**
 * Finds each network's {@link MulticallRoute}: the first batched read on a chain asks the node once whether
 * Multicall3 has code at its canonical address (`eth_getCode`); the answer is kept for the chain. The same results
 * either way: deployless costs only the deployment's gas inside the call.
 */
export const makeMulticallRoutes = (): ((network: Network) => Effect.Effect<MulticallRoute, ChainUnavailable>) => {
  const known = new Map<number, MulticallRoute>()
  return (network) => {
    const route = known.get(network.chainId)
    if (route !== undefined) return Effect.succeed(route)
    return rpc(network, "getCode", () => network.publicClient.getCode({ address: multicall3Address })).pipe(
      Effect.map(
        (code): MulticallRoute =>
          code === undefined || code === "0x" ? { deployless: true } : { multicallAddress: multicall3Address }
      ),
      Effect.tap((found) => Effect.sync(() => known.set(network.chainId, found)))
    )
  }
}
