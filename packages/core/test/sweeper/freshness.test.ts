import { type Address, parseEther, parseUnits } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Answer, freshAccount, type SweeperChain, startSweeperChain, type TestGateway } from "./fixture"

/**
 * Item 4 of issue 31: answers are kept per head block, not for a fixed time, so a sweeping UI that looks again right
 * after its user's own approval or sweep sees it, while identical lookups within one block still cost one read.
 */
describe("dust-sweeping lookups kept per block (the default cacheSeconds)", () => {
  let chain: SweeperChain
  let api: TestGateway
  let token: Address
  const holder = freshAccount()
  const other = freshAccount()
  const late = freshAccount()

  const status = (answer: Answer) =>
    (answer.body as { portfolio: Array<{ token: { symbol: string; status: string } }> }).portfolio.find(
      (entry) => entry.token.symbol === "DUST"
    )?.token.status
  const makers = (answer: Answer) => (answer.body as Array<{ maker: string }>).map((order) => order.maker)
  const count = (method: string) => chain.counter.methods().filter((called) => called === method).length

  beforeAll(async () => {
    chain = await startSweeperChain()
    token = await chain.deployToken("DUST", 18)
    for (const account of [holder, other, late]) {
      await chain.mint(token, account.address, parseUnits("12.5", 18))
      await chain.setBalance(account.address, parseEther("1"))
    }
    // The defaults (cacheSeconds 5) but for the budget per client: this file asks often.
    api = chain.gateway({
      tokens: [{ address: token, symbol: "DUST", decimals: 18 }],
      prices: { eth: 2000, tokens: { [token]: 0.08 } },
      lookupsPerIpPerMinute: 1_000
    })
  })
  afterAll(async () => {
    await chain?.stop()
  })

  it("shows the holder's approval, then its sweep, in the very next lookups (no wait for cacheSeconds)", async () => {
    const before = await api.get(`/api/${holder.address}`)
    expect(status(before)).toBe("sweepable")
    expect(makers(await api.get("/api/orders"))).toEqual([])
    // Asked again in the same block: the kept answer.
    expect((await api.get(`/api/${holder.address}`, { "if-none-match": before.headers.etag ?? "" })).status).toBe(304)

    await chain.approve(holder, token, parseUnits("12.5", 18))
    const approved = await api.get(`/api/${holder.address}`, { "if-none-match": before.headers.etag ?? "" })
    expect(approved.status).toBe(200)
    expect(status(approved)).toBe("approved")
    expect(approved.headers.etag).not.toBe(before.headers.etag)
    expect(makers(await api.get("/api/orders"))).toEqual([holder.address])
    expect(makers(await api.get("/api/all-orders"))).toEqual([holder.address])

    await chain.setRate(token, parseEther("0.0004"))
    const swept = await chain.sweep(token, holder.address, parseUnits("12.5", 18), parseEther("0.005"))
    const after = (await api.get(`/api/${holder.address}`)).body as { past_orders: Array<{ hash: string }> }
    expect(status({ body: after } as Answer)).toBeUndefined()
    expect(after.past_orders.map((order) => order.hash)).toEqual([swept.transactionHash])
    expect(makers(await api.get("/api/orders"))).toEqual([])
  })

  it("answers concurrent identical lookups in one block with one head read and one balance read", async () => {
    // A new block: nothing is kept for it yet.
    await chain.mine()
    chain.counter.reset()
    const together = await Promise.all(Array.from({ length: 10 }, () => api.get(`/api/${other.address}`)))
    expect(together.map((answer) => answer.status)).toEqual(together.map(() => 200))
    expect(new Set(together.map((answer) => answer.raw)).size).toBe(1)
    // The index catches up one block (eth_getLogs) once.
    expect([...chain.counter.methods()].sort()).toEqual(["eth_blockNumber", "eth_call", "eth_getLogs"])

    // Asked again in the same block, each lookup reads the head alone.
    chain.counter.reset()
    for (let i = 0; i < 5; i++)
      expect((await api.get(`/api/${other.address.toLowerCase()}`)).raw).toBe(together[0]?.raw)
    expect(chain.counter.methods()).toEqual(Array.from({ length: 5 }, () => "eth_blockNumber"))
  })

  it("shares one head read between the different lookups that arrive together", async () => {
    await chain.mine()
    chain.counter.reset()
    const paths = [`/api/${holder.address}`, `/api/${other.address}`, "/api/orders", "/api/all-orders"]
    const answers = await Promise.all(paths.map((path) => api.get(path)))
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200])
    expect(count("eth_blockNumber")).toBe(1)
    // Each reads its own balances in that block, once: two wallets, and each listing the standing approval's pair.
    expect(count("eth_call")).toBe(4)
  })

  it("never answers a lookup from a head read that was under way when it arrived", async () => {
    await chain.mine()
    let afterApproval: Promise<Answer> | undefined
    // Once the node has told the first lookup's head, and before that answer is back: the holder approves (a new
    // block), then looks again. Its lookup arrives while the first head read is under way.
    chain.counter.set({
      _tag: "afterWorkOf",
      method: "eth_blockNumber",
      hook: async () => {
        chain.counter.set({ _tag: "pass" })
        await chain.approve(late, token, parseUnits("12.5", 18))
        afterApproval = api.get(`/api/${late.address}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    })
    try {
      const first = await api.get(`/api/${late.address}`)
      expect(status(first)).toBe("sweepable")
      expect(afterApproval).toBeInstanceOf(Promise)
      expect(status((await afterApproval) as Answer)).toBe("approved")
    } finally {
      chain.counter.set({ _tag: "pass" })
    }
  })

  it("answers 304 in a new block when the body is the same: the ETag is the content's", async () => {
    const orders = await api.get("/api/all-orders")
    await chain.mine()
    chain.counter.reset()
    const again = await api.get("/api/all-orders", { "if-none-match": orders.headers.etag ?? "" })
    expect(again.status).toBe(304)
    // The new block was read, not a kept answer served.
    expect(count("eth_blockNumber")).toBe(1)
    expect(count("eth_getLogs")).toBe(1)
  })
})
