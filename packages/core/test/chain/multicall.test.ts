import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type Address, parseEther } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { multicall3Address } from "../../src/chain/multicall3"
import { Networks } from "../../src/chain/networks"
import { BalanceReader } from "../../src/sweeper/BalanceReader"
import { type RpcProxy, startRpcProxy } from "../devnet/rpcProxy"
import {
  type DevnetToken,
  deployDevnetToken,
  freshAddress,
  installMulticall3,
  removeMulticall3,
  type SharedDevnet,
  sendEther,
  sharedDevnet
} from "../devnet/shared"
import { startLocalChain } from "./fixture"

// Batched reads use Multicall3 at its canonical address where the chain has code there, viem's deployless multicall
// elsewhere. anvil has no Multicall3: the first test reads it as it is; the second puts Multicall3 at the canonical
// address (installMulticall3) and takes it away afterwards.
let devnet: SharedDevnet
let proxy: RpcProxy
let sweeper: Address
const holder = freshAddress()
const tokens: Array<DevnetToken> = []
const amountOf = (index: number): bigint => BigInt(index + 1) * 10n ** 6n + BigInt(index)

beforeAll(async () => {
  devnet = await sharedDevnet()
  sweeper = (await startLocalChain()).contracts.sweeper
  proxy = await startRpcProxy(devnet.anvil.rpcUrl)
  for (let i = 0; i < 12; i++)
    tokens.push(await deployDevnetToken(devnet, { name: `T${i}`, symbol: `T${i}`, decimals: 6 }))
  for (const [i, token] of tokens.entries()) await token.mint(holder, amountOf(i))
  await sendEther(devnet, holder, parseEther("0.5"))
})

afterAll(async () => {
  if (devnet !== undefined) await removeMulticall3(devnet)
  await proxy?.stop()
})

/** Reads the holder's holdings through a new BalanceReader on the devnet, through the proxy. */
const readHoldings = (reader: Layer.Layer<BalanceReader>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const network = (yield* Networks).all[0]
      if (network === undefined) throw new Error("no network")
      const balances = yield* BalanceReader
      const first = yield* balances.holdings(
        network,
        holder,
        tokens.map((token) => token.address)
      )
      const firstCalls = proxy.calls()
      proxy.reset()
      const second = yield* balances.holdings(
        network,
        holder,
        tokens.map((token) => token.address)
      )
      return { first, second, firstCalls, secondCalls: proxy.calls() }
    }).pipe(
      Effect.provide(
        Layer.merge(reader, Networks.layer([{ ...devnet.network, rpcUrl: proxy.url, contracts: { sweeper } }]))
      )
    )
  )

const expectHoldings = (holdings: Awaited<ReturnType<typeof readHoldings>>["first"]) => {
  expect(holdings.eth).toBe(parseEther("0.5"))
  expect(holdings.feeBps).toBe(250)
  expect(holdings.tokens.map((token) => [token.balance, token.symbol, token.decimals])).toEqual(
    tokens.map((_, i) => [amountOf(i), `T${i}`, 6])
  )
}

/** The target of an `eth_call`: the Multicall3 it went to, or undefined when the call deploys its own. */
const callTarget = (call: { readonly params: ReadonlyArray<unknown> } | undefined) =>
  (call?.params[0] as { readonly to?: string } | undefined)?.to

describe("batched reads through Multicall3", () => {
  it("run deployless where the chain has no Multicall3: one eth_getCode for the chain, then one eth_call per read", async () => {
    expect(await devnet.publicClient.getCode({ address: multicall3Address })).toBeUndefined()
    proxy.reset()
    const read = await readHoldings(BalanceReader.multicall)
    expectHoldings(read.first)
    expectHoldings(read.second)
    expect(read.firstCalls.map((call) => call.method)).toEqual(["eth_getCode", "eth_call"])
    expect(read.firstCalls[0]?.params[0]).toBe(multicall3Address)
    expect(callTarget(read.firstCalls[1])).toBeUndefined()
    expect(read.secondCalls.map((call) => call.method)).toEqual(["eth_call"])
    expect(callTarget(read.secondCalls[0])).toBeUndefined()
  })

  it("split a deployless read of 100 tokens (over EIP-3860's and EIP-170's caps in one eth_call) into parts read in one block", async () => {
    // 100 tokens, as a sweeper configured with 100 tokens reads them (the 12 deployed ones over and over): 402 calls,
    // about 87 KB of aggregate3 calls and 70 KB of answers, where one deployless eth_call carries at most 48 KiB of
    // init code and returns at most 24 KiB (as the code its constructor returns).
    const many = Array.from({ length: 100 }, (_, i) => tokens[i % tokens.length]?.address as Address)
    proxy.reset()
    const holdings = await Effect.runPromise(
      Effect.gen(function* () {
        const network = (yield* Networks).all[0]
        if (network === undefined) throw new Error("no network")
        return yield* (yield* BalanceReader).holdings(network, holder, many)
      }).pipe(
        Effect.provide(
          Layer.merge(
            BalanceReader.multicall,
            Networks.layer([{ ...devnet.network, rpcUrl: proxy.url, contracts: { sweeper } }])
          )
        )
      )
    )
    expect(holdings.eth).toBe(parseEther("0.5"))
    expect(holdings.tokens.map((token) => [token.balance, token.symbol])).toEqual(
      many.map((_, i) => [amountOf(i % tokens.length), `T${i % tokens.length}`])
    )
    const calls = proxy.calls().filter((call) => call.method === "eth_call")
    expect(calls.length).toBeGreaterThanOrEqual(4)
    expect(calls.map(callTarget)).toEqual(calls.map(() => undefined))
    // Each part is pinned to the block read first, the one the answer names: the values come from one block.
    expect(proxy.methods().filter((method) => method === "eth_blockNumber")).toHaveLength(1)
    expect(calls.map((call) => call.params[1])).toEqual(calls.map(() => `0x${holdings.blockNumber.toString(16)}`))
    // The chain's route (eth_getCode), the block, then every part at once: one HTTP batch.
    expect(proxy.requests()).toBe(3)
  })

  it("go to Multicall3 at its canonical address where the chain has it, with the same results", async () => {
    await installMulticall3(devnet)
    proxy.reset()
    const read = await readHoldings(BalanceReader.multicall)
    expectHoldings(read.first)
    expectHoldings(read.second)
    expect(read.firstCalls.map((call) => call.method)).toEqual(["eth_getCode", "eth_call"])
    expect(callTarget(read.firstCalls[1])?.toLowerCase()).toBe(multicall3Address.toLowerCase())
    expect(read.secondCalls.map((call) => call.method)).toEqual(["eth_call"])
    expect(callTarget(read.secondCalls[0])?.toLowerCase()).toBe(multicall3Address.toLowerCase())
  })
})
