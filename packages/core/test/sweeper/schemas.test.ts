import { OpenOrder, Order, WalletInfo } from "@walletgate/core/sweeper"
import { Schema } from "effect"
import { type Address, parseEther, parseUnits } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshAccount, type SweeperChain, startSweeperChain, type TestGateway } from "./fixture"

/** SPEC §2, transcribed: every field of each resource and its JSON type, nothing more. */
type JsonType = "string" | "number" | "integer" | "array" | "pair of strings"
const SPEC: Record<string, Record<string, JsonType>> = {
  "2.1 wallet information": { address: "string", portfolio: "array", past_orders: "array" },
  "2.2 portfolio entry": {
    "token.symbol": "string",
    "token.contract_address": "string",
    "token.status": "string",
    "balance.amount": "number",
    "balance.asset_type": "string",
    "balance.usd_value": "number",
    "balance.eth_value": "number",
    quote_rate: "number",
    last_transferred_at: "string",
    "sweeping_value.usd": "number",
    "sweeping_value.eth": "number"
  },
  "2.3 past order": {
    blockNum: "integer",
    time: "string",
    "erc20.symbol": "string",
    "erc20.address": "string",
    "erc20.amount": "string",
    hash: "string",
    "value.eth": "string",
    "value.usd": "number",
    ethPrice: "number"
  },
  "2.4 order": { balance: "string", symbol: "string", maker: "string", time: "string", tx: "string" },
  "2.5 open order": { balance: "string", token: "pair of strings", maker: "string", time: "string", tx: "string" }
}
/** Where SPEC §2 leaves nullability open, walletgate answers `null` for "not known" (a token without a price). */
const NULLABLE = new Set(["balance.usd_value", "balance.eth_value", "quote_rate", "last_transferred_at"])
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const DECIMAL = /^(?:0|[1-9]\d*)(?:\.\d*[1-9])?$/
const TIMES = new Set(["time", "last_transferred_at"])
const DECIMALS = new Set(["erc20.amount", "value.eth", "balance"])

/** The leaves of a JSON object as dotted paths; arrays are leaves. */
const leaves = (value: unknown, prefix = ""): Array<[string, unknown]> =>
  Object.entries(value as Record<string, unknown>).flatMap(([key, inner]) =>
    inner !== null && typeof inner === "object" && !Array.isArray(inner)
      ? leaves(inner, `${prefix}${key}.`)
      : [[`${prefix}${key}`, inner] as [string, unknown]]
  )

const typeOf = (value: unknown): string => {
  if (Array.isArray(value)) {
    return value.length === 2 && value.every((item) => typeof item === "string") ? "pair of strings" : "array"
  }
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number"
  return typeof value
}

/** Every difference between `value` and resource `name` of SPEC §2. */
const againstSpec = (name: string, value: unknown): Array<string> => {
  const spec = SPEC[name] ?? {}
  const actual = new Map(leaves(value))
  const problems: Array<string> = []
  for (const field of actual.keys()) if (!(field in spec)) problems.push(`${name}: extra field ${field}`)
  for (const [field, type] of Object.entries(spec)) {
    if (!actual.has(field)) {
      problems.push(`${name}: missing ${field}`)
      continue
    }
    const inner = actual.get(field)
    if (inner === null && NULLABLE.has(field)) continue
    const found = typeOf(inner)
    // An integer is a number too; "number" fields may happen to hold whole values.
    const fits =
      found === type || (type === "number" && found === "integer") || (type === "array" && found === "pair of strings")
    if (!fits) problems.push(`${name}: ${field} is ${found}, SPEC says ${type}`)
    if (TIMES.has(field) && !ISO_UTC.test(String(inner))) problems.push(`${name}: ${field} is not ISO 8601 UTC`)
    if (DECIMALS.has(field) && type === "string" && !DECIMAL.test(String(inner))) {
      problems.push(`${name}: ${field} is not a decimal string`)
    }
  }
  return problems
}

describe("the lookups' answers, field by field against SPEC §2", () => {
  let chain: SweeperChain
  let api: TestGateway
  const holder = freshAccount()
  let dust: Address
  let nopr: Address

  beforeAll(async () => {
    chain = await startSweeperChain()
    dust = await chain.deployToken("DUST", 18)
    nopr = await chain.deployToken("NOPR", 6)
    await chain.setBalance(holder.address, parseEther("1"))
    await chain.mint(dust, holder.address, parseEther("10"))
    await chain.mint(nopr, holder.address, parseUnits("2.5", 6))
    await chain.approve(holder, dust, parseEther("10"))
    await chain.setRate(dust, parseEther("0.001"))
    await chain.sweep(dust, holder.address, parseEther("4"), parseEther("0.004"))
    api = chain.gateway({
      tokens: [
        { address: dust, symbol: "DUST", decimals: 18 },
        { address: nopr, symbol: "NOPR", decimals: 6 }
      ],
      prices: { eth: 2500, tokens: { [dust]: 0.5 } }
    })
  })
  afterAll(async () => {
    await chain?.stop()
  })

  it("GET /api/:address is wallet information with portfolio entries and past orders", async () => {
    const { body } = await api.get(`/api/${holder.address}`)
    const info = body as { portfolio: Array<unknown>; past_orders: Array<unknown> }
    expect(info.portfolio).toHaveLength(3)
    expect(info.past_orders).toHaveLength(1)
    expect([
      ...againstSpec("2.1 wallet information", body),
      ...info.portfolio.flatMap((entry) => againstSpec("2.2 portfolio entry", entry)),
      ...info.past_orders.flatMap((order) => againstSpec("2.3 past order", order))
    ]).toEqual([])
    expect(() => Schema.decodeUnknownSync(WalletInfo)(body, { onExcessProperty: "error" })).not.toThrow()
  })

  it("GET /api/all-orders is an array of orders, GET /api/orders of open orders", async () => {
    const all = (await api.get("/api/all-orders")).body as Array<unknown>
    const open = (await api.get("/api/orders")).body as Array<unknown>
    expect(all).toHaveLength(2)
    expect(open).toHaveLength(1)
    expect([
      ...all.flatMap((order) => againstSpec("2.4 order", order)),
      ...open.flatMap((order) => againstSpec("2.5 open order", order))
    ]).toEqual([])
    expect(() => Schema.decodeUnknownSync(Schema.Array(Order))(all, { onExcessProperty: "error" })).not.toThrow()
    expect(() => Schema.decodeUnknownSync(Schema.Array(OpenOrder))(open, { onExcessProperty: "error" })).not.toThrow()
  })

  it("the check itself finds a field of the wrong type, a missing one and an extra one", () => {
    expect(
      againstSpec("2.4 order", {
        balance: 1.5,
        symbol: "DUST",
        maker: "0x",
        time: "2026-01-01T00:00:00.000Z",
        extra: 1
      })
    ).toEqual([
      "2.4 order: extra field extra",
      "2.4 order: balance is number, SPEC says string",
      "2.4 order: missing tx"
    ])
  })
})
