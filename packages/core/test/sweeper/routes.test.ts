import { embeddedPorts, type GatewayRequest, makeGateway, type NetworkConfig, TokenRegistry } from "@walletgate/core"
import { describe, expect, it } from "vitest"
import { entityTag, noneMatch } from "../../src/http/caching"
import { corsHeaders } from "../../src/http/cors"
import { resolveSweeperSettings } from "../../src/sweeper/settings"
import { caller } from "./fixture"

/** A network whose node is never reached by these tests: nothing here reads the chain. */
const unreachable: NetworkConfig = {
  slug: "anvil",
  chainId: 31337,
  rpcUrl: "http://127.0.0.1:9",
  testnet: true,
  contracts: { sweeper: "0x0000000000000000000000000000000000000004" }
}
const ADDRESS = "0x52908400098527886E0F7030069857D2E4169EE7"
const request = (headers: Record<string, string>): GatewayRequest => ({
  method: "GET",
  path: "/",
  query: new URLSearchParams(),
  headers
})

describe("CORS with a list of origins", () => {
  const api = () =>
    caller(
      makeGateway({
        ports: embeddedPorts({
          networks: [unreachable],
          sweeper: { network: "anvil", tokens: [], corsOrigins: ["https://app.example"] }
        }),
        loggers: []
      })
    )

  it("names a listed origin, varies by origin, and leaves others without the header", async () => {
    const { gateway, get, call } = api()
    try {
      const listed = await get("/api/0x1", { origin: "https://app.example" })
      expect(listed.status).toBe(400)
      expect(listed.headers).toMatchObject({ "access-control-allow-origin": "https://app.example", vary: "origin" })
      const other = await get("/api/0x1", { origin: "https://evil.example" })
      expect(other.headers["access-control-allow-origin"]).toBeUndefined()
      expect(other.headers.vary).toBe("origin")
      const preflight = await call("OPTIONS", "/api/all-orders", { origin: "https://app.example" })
      expect(preflight.status).toBe(204)
      expect(preflight.headers).toMatchObject({
        "access-control-allow-origin": "https://app.example",
        "access-control-allow-methods": "GET, OPTIONS",
        "access-control-allow-headers": "if-none-match, x-request-id"
      })
    } finally {
      await gateway.dispose()
    }
  })

  it("is only on the lookups: other endpoints carry no CORS header", async () => {
    const { gateway, get } = api()
    try {
      const health = await get("/v1/health", { origin: "https://app.example" })
      expect(health.headers["access-control-allow-origin"]).toBeUndefined()
    } finally {
      await gateway.dispose()
    }
  })

  it("* by default names every origin and exposes ETag and Retry-After", () => {
    expect(corsHeaders("*", request({ origin: "https://a.example" }))).toEqual({
      "access-control-allow-origin": "*",
      "access-control-expose-headers": "etag, retry-after, x-request-id"
    })
  })
})

describe("the lookups' configuration", () => {
  it("a sweeper network that is not served fails at start", async () => {
    const gateway = makeGateway({
      ports: embeddedPorts({ networks: [unreachable], sweeper: { network: "base", tokens: [] } }),
      loggers: []
    })
    await expect(gateway.ready()).rejects.toEqual(new RangeError('sweeper.network: "base" is not a served network'))
    expect((await caller(gateway).get(`/api/${ADDRESS}`)).status).toBe(500)
    await gateway.dispose()
  })

  it("refuses out-of-range settings and bad token lists at start", () => {
    expect(() => resolveSweeperSettings({ network: "anvil", tokens: [], maxAgeSeconds: 301 })).toThrow(/maxAgeSeconds/)
    expect(() => resolveSweeperSettings({ network: "anvil", tokens: [], maxBlockRange: 0 })).toThrow(/maxBlockRange/)
    expect(() => resolveSweeperSettings({ network: "anvil", tokens: [], corsOrigins: ["https://a.example/"] })).toThrow(
      /not an origin/
    )
    expect(() => resolveSweeperSettings({ network: "anvil", tokens: [], cacheSeconds: 61 })).toThrow(/cacheSeconds/)
    expect(() => resolveSweeperSettings({ network: "anvil", tokens: [], lookupsPerIpPerMinute: 0 })).toThrow(
      /lookupsPerIpPerMinute/
    )
    expect(() => resolveSweeperSettings({ network: "anvil", tokens: [], maxOrders: 10_001 })).toThrow(/maxOrders/)
    expect(resolveSweeperSettings(undefined)).toMatchObject({
      network: undefined,
      maxAgeSeconds: 15,
      corsOrigins: "*",
      cacheSeconds: 5,
      lookupsPerIpPerMinute: 60,
      maxOrders: 1_000
    })
    const token = { address: ADDRESS, symbol: "DUST", decimals: 18 } as const
    expect(() => TokenRegistry.layer({ anvil: [token, { ...token, address: ADDRESS.toLowerCase() as "0x" }] })).toThrow(
      /listed twice/
    )
    expect(() => TokenRegistry.layer({ anvil: [{ ...token, decimals: 78 }] })).toThrow(/decimals/)
    expect(() =>
      TokenRegistry.layer({ anvil: [{ ...token, address: "0x52908400098527886e0F7030069857D2E4169EE7" }] })
    ).toThrow(/not an address/)
  })
})

describe("entity tags", () => {
  it("are strong, quoted and change with the bytes", () => {
    expect(entityTag("{}")).toMatch(/^"[A-Za-z0-9_-]{43}"$/)
    expect(entityTag("{}")).not.toBe(entityTag("{ }"))
  })

  it("If-None-Match matches by weak comparison, in a list, or with *", () => {
    const tag = entityTag("{}")
    expect(noneMatch(undefined, tag)).toBe(false)
    expect(noneMatch(tag, tag)).toBe(true)
    expect(noneMatch(`W/${tag}`, tag)).toBe(true)
    expect(noneMatch(`"a", ${tag}`, tag)).toBe(true)
    expect(noneMatch("*", tag)).toBe(true)
    expect(noneMatch('"a", "b"', tag)).toBe(false)
  })
})
