import { type NetworkConfig, Networks } from "@walletgate/core"
import { Effect } from "effect"
import { zeroAddress } from "viem"
import { describe, expect, it } from "vitest"

// Nothing here talks to a node: resolving a name only reads the configuration.
const network = (slug: string, chainId: number): NetworkConfig => ({
  slug,
  chainId,
  rpcUrl: "http://127.0.0.1:9",
  testnet: chainId !== 1,
  contracts: { sweeper: zeroAddress }
})

const resolve = (names: ReadonlyArray<string>) =>
  Effect.runSync(
    Effect.map(Effect.service(Networks), (networks) => names.map((name) => networks.resolve(name)?.slug)).pipe(
      Effect.provide(Networks.layer([network("mainnet", 1), network("base-sepolia", 84532), network("eth", 31337)]))
    )
  )

describe("chain names", () => {
  it("resolves EIP-3770 short names and the Patch SDK's names to the configured network of that chain id", () => {
    expect(resolve(["basesep", "84532", "base-sepolia"])).toEqual(["base-sepolia", "base-sepolia", "base-sepolia"])
    expect(resolve(["1", "mainnet"])).toEqual(["mainnet", "mainnet"])
  })

  it("prefers the operator's own slug to a short name, and never resolves a chain the gateway does not serve", () => {
    // A network configured with the slug "eth" keeps it, even though "eth" is mainnet's short name.
    expect(resolve(["eth"])).toEqual(["eth"])
    expect(resolve(["matic", "arb1", "polygonamoy", "constructor", "__proto__"])).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined
    ])
  })
})
