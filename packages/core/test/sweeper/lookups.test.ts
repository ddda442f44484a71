import { PriceOracle } from "@walletgate/core"
import { type Address, maxUint256, parseEther, parseUnits, zeroAddress } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshAccount, type SweeperChain, startSweeperChain, type TestGateway } from "./fixture"

type Symbol = "DUST" | "USDX" | "NOPR" | "IDLE" | "APPR"
const DECIMALS: Record<Symbol, number> = { DUST: 18, USDX: 6, NOPR: 18, IDLE: 8, APPR: 2 }

/** The hand arithmetic below uses these: ETH at $2 000 and the local sweeper's fee of 250 bps (2.5 %). */
const ETH_USD = 2000
const KEPT = (10_000 - 250) / 10_000

describe("dust-sweeping lookups on a real anvil", () => {
  let chain: SweeperChain
  let api: TestGateway
  const holder = freshAccount()
  const token = {} as Record<Symbol, Address>
  const sweeperOptions = () => ({
    tokens: (Object.keys(DECIMALS) as Array<Symbol>).map((symbol) => ({
      address: token[symbol],
      symbol,
      decimals: DECIMALS[symbol]
    })),
    // NOPR has no price: it is listed, yet unsupported.
    prices: { eth: ETH_USD, tokens: { [token.DUST]: 0.08, [token.USDX]: 1, [token.IDLE]: 5, [token.APPR]: 2 } },
    // Each test changes the chain and looks again at once: nothing is kept (limits.test.ts tests keeping).
    cacheSeconds: 0
  })
  const units = (symbol: Symbol, amount: string) => parseUnits(amount, DECIMALS[symbol])
  const wallet = async () => {
    // The holder's ETH is set, not left to what its approvals' gas cost: a value to compute by hand.
    await chain.setBalance(holder.address, parseEther("0.75"))
    return api.get(`/api/${holder.address}`)
  }
  const entry = (body: unknown, symbol: string) =>
    (body as { portfolio: Array<{ token: { symbol: string } }> }).portfolio.find((e) => e.token.symbol === symbol)

  beforeAll(async () => {
    chain = await startSweeperChain()
    for (const symbol of Object.keys(DECIMALS) as Array<Symbol>) {
      token[symbol] = await chain.deployToken(symbol, DECIMALS[symbol])
    }
    await chain.setBalance(holder.address, parseEther("1"))
    await chain.mint(token.DUST, holder.address, units("DUST", "12.5"))
    await chain.mint(token.USDX, holder.address, units("USDX", "3.25"))
    await chain.mint(token.NOPR, holder.address, units("NOPR", "7"))
    await chain.mint(token.APPR, holder.address, units("APPR", "4"))
    await chain.approve(holder, token.USDX, units("USDX", "1"))
    await chain.approve(holder, token.APPR, maxUint256)
    api = chain.gateway(sweeperOptions())
  })
  afterAll(async () => {
    await chain?.stop()
  })

  it("shows each status for its reason, with values computed by hand", async () => {
    const answer = await wallet()
    expect(answer.status).toBe(200)
    const body = answer.body as { address: string; portfolio: Array<unknown>; past_orders: Array<unknown> }
    expect(body.address).toBe(holder.address)
    expect(body.past_orders).toEqual([])
    // IDLE is listed and priced, but the holder has none: no entry.
    expect(body.portfolio.map((e) => (e as { token: { symbol: string } }).token.symbol)).toEqual([
      "ETH",
      "DUST",
      "USDX",
      "NOPR",
      "APPR"
    ])
    // ETH is not on the token list (sweeps pay in it): unsupported, nothing to receive. 0.75 × 2 000 = 1 500.
    // No Transfer event tells its moves: its time is the block the balance was read in, the head (SPEC §2.2: a string).
    expect(entry(body, "ETH")).toEqual({
      token: { symbol: "ETH", contract_address: zeroAddress, status: "unsupported" },
      balance: { amount: 0.75, asset_type: "ETH", usd_value: 1500, eth_value: 0.75 },
      quote_rate: ETH_USD,
      last_transferred_at: await chain.blockTime(await chain.publicClient.getBlockNumber({ cacheTime: 0 })),
      sweeping_value: { usd: 0, eth: 0 }
    })
    // No allowance: sweepable. 12.5 × $0.08 = $1; / 2 000 = 0.0005 ETH; less 2.5 %: $0.975, 0.0004875 ETH.
    expect(entry(body, "DUST")).toMatchObject({
      token: { symbol: "DUST", contract_address: token.DUST, status: "sweepable" },
      balance: { amount: 12.5, asset_type: "DUST", usd_value: 1, eth_value: 0.0005 },
      quote_rate: 0.08,
      sweeping_value: { usd: 0.975, eth: 0.0004875 }
    })
    expect(1 * KEPT).toBeCloseTo(0.975, 12)
    // An allowance of 1 below a balance of 3.25: sweepable. $3.25; 0.001625 ETH; less 2.5 %: $3.16875, 0.001584375.
    expect(entry(body, "USDX")).toMatchObject({
      token: { status: "sweepable" },
      balance: { amount: 3.25, usd_value: 3.25, eth_value: 0.001625 },
      quote_rate: 1,
      sweeping_value: { usd: 3.16875, eth: 0.001584375 }
    })
    // Listed but without a price: unsupported, no value known, nothing to receive.
    expect(entry(body, "NOPR")).toMatchObject({
      token: { status: "unsupported" },
      balance: { amount: 7, usd_value: null, eth_value: null },
      quote_rate: null,
      sweeping_value: { usd: 0, eth: 0 }
    })
    // An unlimited allowance covers the balance: approved. 4 × $2 = $8; 0.004 ETH; less 2.5 %: $7.8, 0.0039 ETH.
    expect(entry(body, "APPR")).toMatchObject({
      token: { status: "approved" },
      balance: { amount: 4, usd_value: 8, eth_value: 0.004 },
      sweeping_value: { usd: 7.8, eth: 0.0039 }
    })
  })

  it("gives the native coin's entry the time of the block its balance was read in, as a string", async () => {
    await chain.anvil("evm_increaseTime", [3600])
    await chain.mine()
    const head = await chain.publicClient.getBlockNumber({ cacheTime: 0 })
    const answer = await wallet()
    expect(entry(answer.body, "ETH")).toMatchObject({ last_transferred_at: await chain.blockTime(head) })
  })

  it("answers money as JSON numbers without float noise: 3.25 × $1 less 2.5 % is 3.16875, not 3.1687499999999997", async () => {
    const answer = await wallet()
    // The text, not the parsed value: noise shows in what the client reads.
    const text = JSON.stringify(answer.body)
    expect(text).not.toMatch(/\d\.\d*(?:0000000|9999999)\d/)
    expect(entry(answer.body, "USDX")).toMatchObject({ sweeping_value: { usd: 3.16875, eth: 0.001584375 } })
  })

  it("takes an all-uppercase address like an all-lowercase one, and refuses a mixed case with a wrong checksum", async () => {
    const upper = await api.get(`/api/0x${holder.address.slice(2).toUpperCase()}`)
    expect(upper.status).toBe(200)
    expect((upper.body as { address: string }).address).toBe(holder.address)
    // The checksummed form with one letter's case flipped: mixed case, wrong checksum.
    const at = holder.address.slice(2).search(/[a-fA-F]/) + 2
    const letter = holder.address.charAt(at)
    const flipped = letter === letter.toUpperCase() ? letter.toLowerCase() : letter.toUpperCase()
    const mixed = await api.get(`/api/${holder.address.slice(0, at)}${flipped}${holder.address.slice(at + 1)}`)
    expect(mixed.status).toBe(400)
  })

  it("an order appears on approval and moves to the past orders on sweep", async () => {
    const before = await api.get("/api/orders")
    expect(before.status).toBe(200)
    // Open orders: standing approvals with balance left, min(balance, allowance): USDX min(3.25, 1), APPR min(4, ∞).
    expect(
      (before.body as Array<{ token: [string, string]; balance: string }>).map((o) => [o.token[0], o.balance])
    ).toEqual([
      ["APPR", "4"],
      ["USDX", "1"]
    ])

    const approval = await chain.approve(holder, token.DUST, units("DUST", "20"))
    const opened = await api.get("/api/orders")
    expect((opened.body as Array<unknown>)[0]).toEqual({
      balance: "12.5",
      token: ["DUST", token.DUST],
      maker: holder.address,
      time: await chain.blockTime(approval.blockNumber),
      tx: approval.transactionHash
    })
    expect(entry((await wallet()).body, "DUST")).toMatchObject({ token: { status: "approved" } })

    // 0.0004 ETH per whole DUST: 12.5 DUST cost 0.005 ETH; the fee is 2.5 % of it, 0.000125; the holder gets 0.004875.
    await chain.setRate(token.DUST, parseEther("0.0004"))
    const swept = await chain.sweep(token.DUST, holder.address, units("DUST", "12.5"), parseEther("0.005"))

    const after = await api.get("/api/orders")
    expect((after.body as Array<{ token: [string, string] }>).map((o) => o.token[0])).toEqual(["APPR", "USDX"])
    const info = (await wallet()).body as { portfolio: Array<unknown>; past_orders: Array<unknown> }
    expect(entry(info, "DUST")).toBeUndefined()
    expect(info.past_orders).toEqual([
      {
        blockNum: Number(swept.blockNumber),
        time: await chain.blockTime(swept.blockNumber),
        erc20: { symbol: "DUST", address: token.DUST, amount: "12.5" },
        hash: swept.transactionHash,
        // 0.004875 ETH × $2 000 = $9.75.
        value: { eth: "0.004875", usd: 9.75 },
        ethPrice: ETH_USD
      }
    ])

    const all = (await api.get("/api/all-orders")).body as Array<Record<string, unknown>>
    expect(all[0]).toEqual({
      balance: "12.5",
      symbol: "DUST",
      maker: holder.address,
      time: await chain.blockTime(swept.blockNumber),
      tx: swept.transactionHash
    })
    // The swept DUST order is listed once, as swept; the open ones follow, newest first.
    expect(all.map((order) => [order.symbol, order.balance])).toEqual([
      ["DUST", "12.5"],
      ["APPR", "4"],
      ["USDX", "1"]
    ])
  })

  it("a partial sweep leaves the rest open and sets the last transfer time", async () => {
    // 0.0005 ETH per whole USDX (10^6 base units); the rate is per 10^18 base units: 0.0005 × 10^12 ETH.
    // 0.4 USDX then cost 0.0002 ETH.
    await chain.setRate(token.USDX, parseEther("500000000"))
    const swept = await chain.sweep(token.USDX, holder.address, units("USDX", "0.4"), parseEther("0.0002"))
    const open = (await api.get("/api/orders")).body as Array<{ token: [string, string]; balance: string }>
    // Balance 3.25 − 0.4 = 2.85; allowance 1 − 0.4 = 0.6: 0.6 is left to sweep.
    expect(open.find((order) => order.token[0] === "USDX")?.balance).toBe("0.6")
    const info = (await wallet()).body
    expect(entry(info, "USDX")).toMatchObject({
      balance: { amount: 2.85 },
      last_transferred_at: await chain.blockTime(swept.blockNumber)
    })
    const minted = await chain.mint(token.APPR, holder.address, units("APPR", "1"))
    expect(entry((await wallet()).body, "APPR")).toMatchObject({
      balance: { amount: 5 },
      last_transferred_at: await chain.blockTime(minted.blockNumber)
    })
  })

  it("answers with a strong ETag, 304 on If-None-Match, a short public max-age and CORS", async () => {
    const first = await wallet()
    const etag = first.headers.etag ?? ""
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/)
    expect(first.headers["cache-control"]).toBe("public, max-age=15")
    expect(first.headers["access-control-allow-origin"]).toBe("*")
    expect((await api.get(`/api/${holder.address.toLowerCase()}`)).headers.etag).toBe(etag)

    const notModified = await api.get(`/api/${holder.address}`, { "if-none-match": `"other", ${etag}` })
    expect(notModified.status).toBe(304)
    expect(notModified.raw).toBe("")
    expect(notModified.headers).toMatchObject({ etag, "cache-control": "public, max-age=15" })
    expect(notModified.headers["content-type"]).toBeUndefined()
    expect(notModified.headers["access-control-allow-origin"]).toBe("*")

    await chain.mint(token.NOPR, holder.address, units("NOPR", "1"))
    const changed = await api.get(`/api/${holder.address}`, { "if-none-match": etag })
    expect(changed.status).toBe(200)
    expect(changed.headers.etag).not.toBe(etag)
    const orders = await api.get("/api/orders")
    expect((await api.get("/api/orders", { "if-none-match": orders.headers.etag ?? "" })).status).toBe(304)
  })

  it("answers 503 upstream_unavailable with Retry-After when the node is down, after a bounded few tries", async () => {
    chain.counter.set({ _tag: "down" })
    chain.counter.reset()
    try {
      for (const path of [`/api/${holder.address}`, "/api/orders", "/api/all-orders"]) {
        const answer = await api.get(path)
        expect(answer.status).toBe(503)
        expect(answer.headers["retry-after"]).toBe("5")
        expect(answer.headers["cache-control"]).toBe("no-store")
        expect(answer.headers["access-control-allow-origin"]).toBe("*")
        expect(answer.body).toMatchObject({ code: "upstream_unavailable" })
      }
      // Each lookup's first read: one try and two retries with backoff, then the answer.
      expect(chain.counter.requests()).toBe(9)
    } finally {
      chain.counter.set({ _tag: "pass" })
    }
    expect((await api.get(`/api/${holder.address}`)).status).toBe(200)
  })

  it("retries a transient node failure and answers in full", async () => {
    await chain.mine()
    chain.counter.reset()
    chain.counter.failNext(1)
    const answer = await api.get(`/api/${holder.address}`)
    expect(answer.status).toBe(200)
    expect(chain.counter.methods()).toEqual(["eth_call", "eth_call", "eth_getLogs"])
  })

  it("answers index_syncing while the index is further behind than one lookup reads, then catches up", async () => {
    // 5 blocks per eth_getLogs, 2 per lookup: 10 blocks per lookup, and the file's range of the chain has more than 30.
    await chain.mine(30)
    const reference = await wallet()
    const slow = chain.gateway({ ...sweeperOptions(), maxBlockRange: 5, maxLogRequestsPerLookup: 2 })
    const head = Number(await chain.publicClient.getBlockNumber({ cacheTime: 0 }))
    const answers: Array<number> = []
    let last = await slow.get(`/api/${holder.address}`)
    answers.push(last.status)
    while (last.status === 503 && answers.length <= head) {
      expect(last.headers["retry-after"]).toBe("2")
      expect(last.body).toMatchObject({ code: "index_syncing" })
      last = await slow.get(`/api/${holder.address}`)
      answers.push(last.status)
    }
    // Blocks fromBlock…head are read 10 per lookup; the last of them also answers.
    expect(answers[0]).toBe(503)
    expect(answers).toHaveLength(Math.ceil((head - Number(chain.fromBlock) + 1) / 10))
    expect(last.status).toBe(200)
    expect(last.raw).toBe(reference.raw)
  })

  it("answers 503 price_unavailable when the price source is down, never values without prices", async () => {
    const unpriced = chain.gateway(
      sweeperOptions(),
      PriceOracle.http({ url: "http://127.0.0.1:9/prices", timeoutMs: 1_000 })
    )
    const answer = await unpriced.get(`/api/${holder.address}`)
    expect(answer.status).toBe(503)
    expect(answer.headers["retry-after"]).toBe("5")
    expect(answer.body).toMatchObject({ code: "price_unavailable" })
  })
})
