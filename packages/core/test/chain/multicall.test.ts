import { type Address, createPublicClient, getAddress, type Hash, http, parseEther } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { multicallArtifact, testTokenArtifact } from "../../src/chain/artifacts"
import { freshAddress, type LocalChain, startLocalChain } from "./fixture"

let local: LocalChain
const holder = freshAddress()
const tokens: Array<Address> = []
const tokenCount = 100
/** Token i holds a distinct amount, so a result read from the wrong token would show. */
const amountOf = (index: number): bigint => BigInt(index + 1) * 10n ** 6n + BigInt(index)

beforeAll(async () => {
  local = await startLocalChain()
  // 100 deployments, then 100 mints, sent one after the other and awaited together. Sent at once they could reach
  // anvil out of nonce order, and a transaction queued behind a gap was at times never mined (the setup hung).
  const deployments: Array<Hash> = []
  for (let i = 0; i < tokenCount; i++) {
    deployments.push(await local.relayer.deployContract({ ...testTokenArtifact, args: [`Token ${i}`, `T${i}`, 6] }))
  }
  for (const receipt of await Promise.all(deployments.map(local.receipt))) {
    if (!receipt.contractAddress) throw new Error(`deployment ${receipt.transactionHash} made no contract`)
    tokens.push(getAddress(receipt.contractAddress))
  }
  const mints: Array<Hash> = []
  for (const [i, token] of tokens.entries()) {
    mints.push(
      await local.relayer.writeContract({
        address: token,
        abi: testTokenArtifact.abi,
        functionName: "mint",
        args: [holder, amountOf(i)]
      })
    )
  }
  await Promise.all(mints.map(local.receipt))
  await local.receipt(await local.relayer.sendTransaction({ to: holder, value: parseEther("0.5") }))
})

afterAll(async () => {
  await local?.stop()
})

describe("Multicall", () => {
  it("reads 100 token balances and the ETH balance of one address in one RPC request", async () => {
    let requests = 0
    const counted = createPublicClient({
      chain: local.chain,
      transport: http(local.rpcUrl, { onFetchRequest: () => void requests++ })
    })
    const results = await counted.multicall({
      multicallAddress: local.contracts.multicall,
      // viem splits a multicall into chunks of 1 024 bytes of calldata by default; 0 keeps it in one eth_call.
      batchSize: 0,
      allowFailure: false,
      contracts: [
        ...tokens.map(
          (token) =>
            ({ address: token, abi: testTokenArtifact.abi, functionName: "balanceOf", args: [holder] }) as const
        ),
        {
          address: local.contracts.multicall,
          abi: multicallArtifact.abi,
          functionName: "getEthBalance",
          args: [holder]
        } as const
      ]
    })

    expect(requests).toBe(1)
    expect(results).toEqual([...tokens.map((_, i) => amountOf(i)), parseEther("0.5")])
  })

  it("reports a failing read without failing the others, and never changes state", async () => {
    const [token] = tokens
    if (token === undefined) throw new Error("no token deployed")
    const [balance, noContract, mint] = await local.publicClient.multicall({
      multicallAddress: local.contracts.multicall,
      contracts: [
        { address: token, abi: testTokenArtifact.abi, functionName: "balanceOf", args: [holder] },
        { address: freshAddress(), abi: testTokenArtifact.abi, functionName: "balanceOf", args: [holder] },
        // A write: STATICCALL makes it fail, so the aggregator cannot be used to act on anyone's behalf.
        { address: token, abi: testTokenArtifact.abi, functionName: "mint", args: [holder, 1n] }
      ]
    })
    expect(balance).toEqual({ status: "success", result: amountOf(0) })
    expect(noContract?.status).toBe("failure")
    expect(mint?.status).toBe("failure")
  })
})
