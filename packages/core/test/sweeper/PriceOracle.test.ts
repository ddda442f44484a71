import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { PriceOracle } from "@walletgate/core"
import { Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import type { Address } from "viem"
import { afterEach } from "vitest"

const A: Address = "0x52908400098527886E0F7030069857D2E4169EE7"
const B: Address = "0x000000000000000000000000000000000000dEaD"
const C: Address = "0x00000000000000000000000000000000000000C0"

const servers: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((close) => close()))
})

/** A local price API: records each request's query and answers with `reply` (which may never answer). */
const priceApi = (reply: (query: URLSearchParams, response: ServerResponse) => void) =>
  Effect.promise(async () => {
    const queries: Array<URLSearchParams> = []
    const server = createServer((request, response) => {
      const query = new URL(request.url ?? "/", "http://x").searchParams
      queries.push(query)
      reply(query, response)
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    servers.push(
      () =>
        new Promise((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        })
    )
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/prices`, queries }
  })

/** Answers as the contract says: ETH at 3 000, A at 0.5, B explicitly without a price, others absent. */
const contractAnswer = (_: URLSearchParams, response: ServerResponse) => {
  response.writeHead(200, { "content-type": "application/json" })
  response.end(JSON.stringify({ eth: 3000, tokens: { [A.toLowerCase()]: 0.5, [B.toLowerCase()]: null } }))
}

const pricesOf = (url: string, tokens: ReadonlyArray<Address>, options: { ttlMs?: number; timeoutMs?: number } = {}) =>
  PriceOracle.use((oracle) => oracle.prices("base", tokens)).pipe(Effect.provide(PriceOracle.http({ url, ...options })))

describe("PriceOracle.http", () => {
  it.effect("asks for the network and the lower-case tokens, and keeps only real prices", () =>
    Effect.gen(function* () {
      const api = yield* priceApi(contractAnswer)
      const prices = yield* pricesOf(api.url, [A, B, C])
      expect(prices.eth).toBe(3000)
      expect([...prices.tokens]).toEqual([[A.toLowerCase(), 0.5]])
      expect(api.queries.map((query) => [query.get("network"), query.get("tokens")])).toEqual([
        ["base", [A, B, C].map((token) => token.toLowerCase()).join(",")]
      ])
    })
  )

  it.effect("caches prices and absences for ttlMs, asks only for what it has not seen, and again once stale", () =>
    Effect.gen(function* () {
      const api = yield* priceApi(contractAnswer)
      const oracle = yield* PriceOracle.useSync((service) => service).pipe(
        Effect.provide(PriceOracle.http({ url: api.url, ttlMs: 60_000 }))
      )
      yield* oracle.prices("base", [A, B])
      yield* oracle.prices("base", [A, B])
      expect(api.queries).toHaveLength(1)
      yield* oracle.prices("base", [A, C])
      expect(api.queries.map((query) => query.get("tokens"))).toEqual([
        `${A.toLowerCase()},${B.toLowerCase()}`,
        C.toLowerCase()
      ])
      yield* TestClock.adjust("61 seconds")
      const again = yield* oracle.prices("base", [A])
      expect(api.queries).toHaveLength(3)
      expect(again.tokens.get(A.toLowerCase())).toBe(0.5)
    })
  )

  it.effect("splits many tokens into requests of maxTokensPerRequest", () =>
    Effect.gen(function* () {
      const api = yield* priceApi(contractAnswer)
      yield* PriceOracle.use((oracle) => oracle.prices("base", [A, B, C])).pipe(
        Effect.provide(PriceOracle.http({ url: api.url, maxTokensPerRequest: 2 }))
      )
      expect(api.queries.map((query) => query.get("tokens")?.split(",").length)).toEqual([2, 1])
    })
  )

  it.effect("fails with PriceUnavailable on an HTTP error, another shape, no ETH price or a refused connection", () =>
    Effect.gen(function* () {
      const failing = [
        (_: URLSearchParams, response: ServerResponse) => response.writeHead(502).end("bad gateway"),
        (_: URLSearchParams, response: ServerResponse) => response.writeHead(200).end('{"tokens": {}}'),
        (_: URLSearchParams, response: ServerResponse) => response.writeHead(200).end('{"eth": -1, "tokens": {}}'),
        (_: URLSearchParams, response: ServerResponse) => response.writeHead(200).end("not json")
      ]
      for (const reply of failing) {
        const api = yield* priceApi(reply)
        const exit = yield* Effect.exit(pricesOf(api.url, [A]))
        expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("PriceUnavailable")
      }
      const refused = yield* Effect.flip(pricesOf("http://127.0.0.1:9/prices", [A]))
      expect(refused._tag).toBe("PriceUnavailable")
    })
  )

  it.effect("gives up after timeoutMs", () =>
    Effect.gen(function* () {
      // The API takes the request and never answers.
      const api = yield* priceApi(() => undefined)
      const fiber = yield* Effect.forkChild(Effect.flip(pricesOf(api.url, [A], { timeoutMs: 2_000 })))
      while (api.queries.length === 0) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      yield* TestClock.adjust("2 seconds")
      const error = yield* Fiber.join(fiber)
      expect(error).toMatchObject({ _tag: "PriceUnavailable", cause: "price API did not answer in time" })
    })
  )
})

describe("PriceOracle.static", () => {
  it.effect("answers from the table, by address in any case", () =>
    Effect.gen(function* () {
      const prices = yield* PriceOracle.use((oracle) => oracle.prices("anvil", [A, C])).pipe(
        Effect.provide(PriceOracle.static({ eth: 2000, tokens: { [A.toLowerCase()]: 1.5 } }))
      )
      expect(prices).toEqual({ eth: 2000, tokens: new Map([[A.toLowerCase(), 1.5]]) })
    })
  )

  it.effect("without an ETH price, every request is PriceUnavailable", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        PriceOracle.use((oracle) => oracle.prices("anvil", [])).pipe(Effect.provide(PriceOracle.static()))
      )
      expect(error._tag).toBe("PriceUnavailable")
    })
  )

  it("refuses a table with a price that is not positive or a key that is not an address", () => {
    expect(() => PriceOracle.static({ eth: 0 })).toThrow(RangeError)
    expect(() => PriceOracle.static({ eth: 1, tokens: { [A]: Number.NaN } })).toThrow(RangeError)
    expect(() => PriceOracle.static({ eth: 1, tokens: { "0x12": 1 } })).toThrow(/not an address/)
  })
})
