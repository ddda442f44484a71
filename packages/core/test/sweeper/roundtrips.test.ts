import { type Address, parseEther } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { installMulticall3, removeMulticall3 } from "../devnet/shared"
import { freshAccount, type SweeperChain, startSweeperChain, type TestGateway } from "./fixture"

const TOKENS = 100
/** Token i holds a distinct amount (in whole tokens, 6 decimals), so a value read from the wrong token shows. */
const amountOf = (index: number): bigint => BigInt(index + 1) * 1_000_000n + BigInt(index)

describe("a lookup of an address holding 100 supported tokens", () => {
  let chain: SweeperChain
  let api: TestGateway
  const holder = freshAccount()
  const tokens: Array<Address> = []

  beforeAll(async () => {
    chain = await startSweeperChain()
    // What is counted is the cost on a chain with Multicall3, as every major chain has it.
    await installMulticall3(chain.devnet)
    for (let i = 0; i < TOKENS; i++) tokens.push(await chain.deployToken(`T${i}`, 6))
    for (const [i, token] of tokens.entries()) await chain.mint(token, holder.address, amountOf(i))
    await chain.setBalance(holder.address, parseEther("0.5"))
    api = chain.gateway({
      tokens: tokens.map((address, i) => ({ address, symbol: `T${i}`, decimals: 6 })),
      prices: { eth: 2000, tokens: Object.fromEntries(tokens.map((token) => [token, 1])) },
      // The cost of each lookup is what is counted: nothing is kept between them.
      cacheSeconds: 0
    })
  })
  afterAll(async () => {
    if (chain !== undefined) await removeMulticall3(chain.devnet)
    await chain?.stop()
  })

  const lookup = async () => {
    chain.counter.reset()
    const answer = await api.get(`/api/${holder.address}`)
    expect(answer.status, answer.raw).toBe(200)
    return { answer, methods: chain.counter.methods(), requests: chain.counter.requests() }
  }

  it("costs two RPC round trips from a cold index: one eth_call for every balance, one eth_getLogs", async () => {
    const { answer, methods, requests } = await lookup()
    // The first read of a chain also asks once whether Multicall3 is there.
    expect(requests).toBe(3)
    expect(methods).toEqual(["eth_getCode", "eth_call", "eth_getLogs"])
    const portfolio = (answer.body as { portfolio: Array<{ token: { symbol: string }; balance: { amount: number } }> })
      .portfolio
    expect(portfolio).toHaveLength(TOKENS + 1)
    expect(portfolio.slice(1).map((entry) => [entry.token.symbol, entry.balance.amount])).toEqual(
      tokens.map((_, i) => [`T${i}`, Number(amountOf(i)) / 1e6])
    )
  })

  it("costs two after a new block, and one when the index is already at the head", async () => {
    await chain.mine()
    expect(await lookup()).toMatchObject({ requests: 2, methods: ["eth_call", "eth_getLogs"] })
    expect(await lookup()).toMatchObject({ requests: 1, methods: ["eth_call"] })
  })

  it("with answers kept (the default), costs one head read more in a new block, and the head read alone again in it", async () => {
    const kept = chain.gateway({
      tokens: tokens.map((address, i) => ({ address, symbol: `T${i}`, decimals: 6 })),
      prices: { eth: 2000, tokens: Object.fromEntries(tokens.map((token) => [token, 1])) }
    })
    expect((await kept.get(`/api/${holder.address}`)).status).toBe(200)
    await chain.mine()
    chain.counter.reset()
    expect((await kept.get(`/api/${holder.address}`)).status).toBe(200)
    expect(chain.counter.methods()).toEqual(["eth_blockNumber", "eth_call", "eth_getLogs"])
    chain.counter.reset()
    expect((await kept.get(`/api/${holder.address}`)).status).toBe(200)
    expect(chain.counter.methods()).toEqual(["eth_blockNumber"])
  })
})
