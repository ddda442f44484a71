import { createPublicClient, parseGwei } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { findNetwork, networkTransport } from "../../src/chain/networks"
import { type AnvilInstance, freePort, startAnvil } from "../../src/devnet/anvil"
import { capFees } from "../../src/operations/safeOperation"

describe("a network's RPC endpoints with fallbacks", () => {
  let anvil: AnvilInstance
  let dead: string
  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 4_242 })
    // A port nothing listens on: connections are refused.
    dead = `http://127.0.0.1:${await freePort()}`
  })
  afterAll(() => anvil?.stop())

  it("the first endpoint refuses: the next answers, in the same call", async () => {
    const client = createPublicClient({
      transport: networkTransport({ rpcUrl: dead, fallbackRpcUrls: [dead, anvil.rpcUrl], rpcTimeoutMs: 1_000 })
    })
    expect(await client.getChainId()).toBe(4_242)
  })

  it("every endpoint down: the call fails (no endless retry)", async () => {
    const client = createPublicClient({
      transport: networkTransport({ rpcUrl: dead, fallbackRpcUrls: [dead], rpcTimeoutMs: 500 })
    })
    // The last endpoint tried refused the connection: the error names it, not a timeout or a retry loop.
    await expect(client.getChainId()).rejects.toMatchObject({
      name: "HttpRequestError",
      url: `${dead}/`,
      details: "fetch failed"
    })
  })
})

describe("finding a network by slug, chain id or EIP-3770 short name", () => {
  const networks = [
    { slug: "base-sepolia", chainId: 84532 },
    { slug: "devnet", chainId: 31337 }
  ]
  it.each([
    ["base-sepolia", "base-sepolia"],
    ["84532", "base-sepolia"],
    ["basesep", "base-sepolia"],
    ["31337", "devnet"],
    ["sep", undefined],
    ["0x7a69", undefined]
  ])("%s → %s", (name, slug) => {
    expect(findNetwork(networks, name)?.slug).toBe(slug)
  })
})

describe("fee caps", () => {
  const suggested = { maxFeePerGas: parseGwei("42"), maxPriorityFeePerGas: parseGwei("2") }
  const baseFee = parseGwei("20")
  it("no caps: the node's suggestion as it is", () => {
    expect(capFees(suggested, baseFee, {})).toEqual(suggested)
  })
  it("caps above the suggestion change nothing; below it, lower the offer", () => {
    expect(
      capFees(suggested, baseFee, { maxFeePerGas: parseGwei("100"), maxPriorityFeePerGas: parseGwei("5") })
    ).toEqual(suggested)
    expect(
      capFees(suggested, baseFee, { maxFeePerGas: parseGwei("30"), maxPriorityFeePerGas: parseGwei("1") })
    ).toEqual({ maxFeePerGas: parseGwei("30"), maxPriorityFeePerGas: parseGwei("1") })
  })
  it("a base fee (plus the capped tip) above the cap: nothing to offer", () => {
    expect(capFees(suggested, baseFee, { maxFeePerGas: parseGwei("21") })).toBeUndefined()
    expect(
      capFees(suggested, baseFee, { maxFeePerGas: parseGwei("21"), maxPriorityFeePerGas: parseGwei("1") })
    ).toEqual({
      maxFeePerGas: parseGwei("21"),
      maxPriorityFeePerGas: parseGwei("1")
    })
  })
})
