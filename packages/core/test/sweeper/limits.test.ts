import type { SweeperOptions } from "@walletgate/core"
import { type Address, parseUnits } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshAccount, type SweeperChain, startSweeperChain } from "./fixture"

/**
 * Finding 12 of issue 20: the lookups are unauthenticated, each read the chain, and anyone can add approvals. Kept
 * answers, a budget per client IP and a bound on the listings make their cost independent of how often they are
 * asked and of how many approvals an attacker made.
 */
describe("dust-sweeping lookups under an attacker's load", () => {
  let chain: SweeperChain
  let token: Address
  const holders = [freshAccount(), freshAccount(), freshAccount()]
  const holder = holders[0]?.address as Address
  const options = (more: Partial<SweeperOptions>): Omit<SweeperOptions, "network"> => ({
    tokens: [{ address: token, symbol: "DUST", decimals: 18 }],
    prices: { eth: 2000, tokens: { [token]: 0.08 } },
    ...more
  })

  beforeAll(async () => {
    chain = await startSweeperChain()
    token = await chain.deployToken("DUST", 18)
    // One approval each, oldest first: each holder stands for one order, as an attacker's approvals would.
    for (const account of holders) {
      await chain.mint(token, account.address, parseUnits("5", 18))
      await chain.setBalance(account.address, parseUnits("1", 18))
      await chain.approve(account, token, parseUnits("5", 18))
    }
  })
  afterAll(async () => {
    await chain?.stop()
  })

  it("takes no symbol() longer than 64 characters from a token: the token list's symbol is shown", async () => {
    const long = await chain.deployToken("L".repeat(65), 18)
    const holding = freshAccount()
    await chain.mint(long, holding.address, parseUnits("1", 18))
    const api = chain.gateway({
      tokens: [{ address: long, symbol: "LONG", decimals: 18 }],
      prices: { eth: 2000, tokens: { [long]: 1 } },
      cacheSeconds: 0
    })
    const answer = await api.get(`/api/${holding.address}`)
    expect(answer.status).toBe(200)
    const symbols = (answer.body as { portfolio: Array<{ token: { symbol: string } }> }).portfolio.map(
      (entry) => entry.token.symbol
    )
    expect(symbols).toContain("LONG")
    expect(symbols.every((symbol) => symbol.length <= 64)).toBe(true)
  })

  it("answers N identical lookups in one block with one read of the chain and a head read each, and reads again after the cache time", async () => {
    const api = chain.gateway(options({ cacheSeconds: 1, lookupsPerIpPerMinute: 1_000 }))
    chain.counter.reset()
    // Concurrent lookups share one head read and the read under way; later ones are served what it read.
    const together = await Promise.all(Array.from({ length: 10 }, () => api.get(`/api/${holder}`)))
    const headRead = ["eth_blockNumber"]
    // The gateway's first read of the chain also asks once whether Multicall3 is there (eth_getCode). How many head
    // reads a burst costs is freshness.test.ts's; the very first burst of a process may straggle past its gathering.
    expect(chain.counter.methods().filter((method) => method !== "eth_blockNumber")).toEqual([
      "eth_getCode",
      "eth_call",
      "eth_getLogs"
    ])
    chain.counter.reset()
    const after = []
    for (let i = 0; i < 10; i++) after.push(await api.get(`/api/${holder.toLowerCase()}`))
    expect(chain.counter.methods()).toEqual(after.flatMap(() => headRead))
    const answers = [...together, ...after]
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200))
    expect(new Set(answers.map((answer) => answer.headers.etag)).size).toBe(1)
    // A conditional request is answered from what was kept too.
    const etag = answers[0]?.headers.etag ?? ""
    chain.counter.reset()
    expect((await api.get(`/api/${holder}`, { "if-none-match": etag })).status).toBe(304)
    expect(chain.counter.methods()).toEqual(headRead)

    for (const listing of ["/api/orders", "/api/all-orders"]) {
      chain.counter.reset()
      const first = await api.get(listing)
      expect(first.status).toBe(200)
      expect(chain.counter.requests()).toBeGreaterThan(1)
      chain.counter.reset()
      for (let i = 0; i < 10; i++) expect((await api.get(listing)).raw).toBe(first.raw)
      expect(chain.counter.methods()).toEqual(Array.from({ length: 10 }, () => "eth_blockNumber"))
    }

    // Past the cache time, in the same block (prices move between blocks), the next lookup reads the chain again.
    await new Promise((resolve) => setTimeout(resolve, 1_100))
    chain.counter.reset()
    expect((await api.get(`/api/${holder}`)).status).toBe(200)
    expect(chain.counter.methods()).toEqual([...headRead, "eth_call"])
  })

  it("refuses the N+1-th lookup from one IP with 429 rate_limited and Retry-After, and still answers another IP", async () => {
    const api = chain.gateway(options({ lookupsPerIpPerMinute: 5 }))
    const attacker = "203.0.113.7"
    const paths = [`/api/${holder}`, "/api/orders", "/api/all-orders", `/api/${holders[1]?.address}`, "/api/0x123"]
    // Every lookup counts, whatever its path or answer.
    expect((await Promise.all(paths.map((path) => api.get(path, {}, attacker)))).map((a) => a.status)).toEqual([
      200, 200, 200, 200, 400
    ])
    chain.counter.reset()
    const refused = await api.get(`/api/${holders[2]?.address}`, { origin: "https://app.example" }, attacker)
    expect(refused.status).toBe(429)
    expect(refused.body).toMatchObject({ code: "rate_limited", status: 429 })
    expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1)
    expect(Number(refused.headers["retry-after"])).toBeLessThanOrEqual(60)
    expect(refused.headers["cache-control"]).toBe("no-store")
    // A browser can read the refusal; and the refusal read nothing from the chain.
    expect(refused.headers["access-control-allow-origin"]).toBe("*")
    expect(chain.counter.requests()).toBe(0)

    expect((await api.get(`/api/${holder}`, {}, "198.51.100.1")).status).toBe(200)
    // A preflight is not a lookup: it reads nothing and is not counted.
    expect((await api.call("OPTIONS", "/api/orders", { origin: "https://app.example" }, attacker)).status).toBe(204)
  })

  it("counts the IPv6 addresses of one /64 as one client", async () => {
    const api = chain.gateway(options({ lookupsPerIpPerMinute: 2 }))
    const statuses = []
    for (const address of ["2001:db8:0:1::1", "2001:db8:0:1::2", "2001:db8:0:1:ffff::3"]) {
      statuses.push((await api.get(`/api/${holder}`, {}, address)).status)
    }
    expect(statuses).toEqual([200, 200, 429])
    expect((await api.get(`/api/${holder}`, {}, "2001:db8:0:2::1")).status).toBe(200)
  })

  it("limits clients whose IP is unknown together, never not at all", async () => {
    const api = chain.gateway(options({ lookupsPerIpPerMinute: 3 }))
    const statuses = []
    for (let i = 0; i < 4; i++) statuses.push((await api.get(`/api/${holder}`)).status)
    expect(statuses).toEqual([200, 200, 200, 429])
    expect((await api.get(`/api/${holder}`, {}, "198.51.100.2")).status).toBe(200)
  })

  it("lists at most maxOrders orders, the newest, however many approvals stand", async () => {
    const api = chain.gateway(options({ maxOrders: 2, cacheSeconds: 0 }))
    const open = await api.get("/api/orders")
    expect(open.status).toBe(200)
    // Three approvals stand; only the two newest are read and listed.
    expect((open.body as Array<{ maker: string }>).map((order) => order.maker)).toEqual([
      holders[2]?.address,
      holders[1]?.address
    ])
    const all = await api.get("/api/all-orders")
    expect((all.body as Array<{ maker: string }>).map((order) => order.maker)).toEqual([
      holders[2]?.address,
      holders[1]?.address
    ])
    const unbounded = chain.gateway(options({ cacheSeconds: 0 }))
    expect((await unbounded.get("/api/orders")).body).toHaveLength(3)
  })
})
