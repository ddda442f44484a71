import type { Gateway } from "@walletgate/core"
import {
  allConformanceCases,
  declaredLengthCases,
  makeConformanceGateway,
  refusedBodyThenNext,
  runConformance,
  sendOverHttp,
  sendOverSocket
} from "@walletgate/core/testing"
import { type KoaMiddleware, walletgate } from "@walletgate/koa"
import Koa from "koa"
import { describe, expect, it } from "vitest"
import { hostJsonParser, listen } from "./host"

/** A Koa app: the host's middleware `before`, then walletgate's. */
const app = (mounted: KoaMiddleware, ...before: ReadonlyArray<Koa.Middleware>): Koa => {
  const koa = new Koa()
  for (const middleware of before) koa.use(middleware)
  koa.use(mounted)
  return koa
}

/** Runs the table against `build(gateway)` on a real server, below `base`; returns the failing cases. */
const failingCases = async (build: (gateway: Gateway) => Koa, base: string) => {
  // Mounted: the gateway's own base path, which Koa's middleware honours.
  const gateway = makeConformanceGateway(base === "" ? {} : { basePath: base })
  const server = await listen(build(gateway))
  try {
    const results = await runConformance(sendOverHttp(`${server.url}${base}`))
    expect(Object.keys(results)).toHaveLength(allConformanceCases.length)
    return Object.entries(results).filter(([, problems]) => problems.length > 0)
  } finally {
    await server.close()
    await gateway.dispose()
  }
}

describe("conformance: Koa", () => {
  const targets: Record<string, [build: (gateway: Gateway) => Koa, base: string]> = {
    "mounted at the root": [(gateway) => app(walletgate(gateway)), ""],
    "under basePath /wallet": [(gateway) => app(walletgate(gateway)), "/wallet"],
    "behind the host's JSON body parser": [
      (gateway) => app(walletgate(gateway), hostJsonParser({ keepRaw: true })),
      "/wallet"
    ]
  }
  for (const [name, [build, base]] of Object.entries(targets)) {
    it(`passes every case ${name}`, async () => {
      // A host parser that decodes the body as text has replaced a stray non-UTF-8 byte before walletgate
      // sees it: that case belongs to the host then, as bodies the host itself refuses do behind Express.
      const hostOwned = name.startsWith("behind") ? ["not UTF-8 is 400"] : []
      const failing = await failingCases(build, base)
      expect(failing.filter(([caseName]) => !hostOwned.some((part) => caseName.includes(part)))).toEqual([])
    })
  }

  it("a deliberate difference fails the table", async () => {
    // An adapter that lets Koa choose the content type of the body it writes, instead of the core's.
    const koaPicksTheType: Koa.Middleware = async (ctx, next) => {
      await next()
      ctx.type = "json"
    }
    const failing = await failingCases((gateway) => app(walletgate(gateway), koaPicksTheType), "")
    const problemCases = allConformanceCases.filter((c) => c.expect.contentType === "application/problem+json")
    expect(failing.map(([name]) => name)).toEqual(problemCases.map((c) => c.name))
    expect(failing[0]?.[1]).toEqual(["content-type application/json, expected application/problem+json"])
  })
})

describe("a body declared larger than the limit, through Koa", () => {
  for (const [name, [build, base]] of Object.entries({
    "at the root": [(gateway: Gateway) => app(walletgate(gateway)), ""],
    "under basePath /wallet": [(gateway: Gateway) => app(walletgate(gateway)), "/wallet"]
  } as const)) {
    it(`is refused at once with 413 and the connection closed, mounted ${name}`, async () => {
      const gateway = makeConformanceGateway(base === "" ? {} : { basePath: base })
      const server = await listen(build(gateway))
      try {
        // Only 2 of the declared bytes are sent: the answer comes only if nothing waits for the rest.
        const results = await runConformance(sendOverSocket(`${server.url}${base}`), declaredLengthCases)
        expect(Object.entries(results).filter(([, problems]) => problems.length > 0)).toEqual([])
        // The next request, on a new connection, is answered as usual.
        expect((await fetch(`${server.url}${base}/functions/v1/.well-known/jwks.json`)).status).toBe(200)
      } finally {
        await server.close()
        await gateway.dispose()
      }
    })
  }
})

describe("a refused body and the next request on the same pooled connection, through Koa", () => {
  for (const framing of ["declared", "chunked"] as const) {
    it(`answers 413, then the next request 200 (body of 2 MB, ${framing} length)`, async () => {
      const gateway = makeConformanceGateway()
      const server = await listen(app(walletgate(gateway)))
      try {
        const outcome = await refusedBodyThenNext(server.url, {
          path: "/functions/v1/signInWithOTP",
          nextPath: "/functions/v1/.well-known/jwks.json",
          bytes: 2 * 1024 * 1024,
          framing
        })
        expect(outcome).toEqual({ refused: { status: 413, connection: "close" }, next: 200 })
      } finally {
        await server.close()
        await gateway.dispose()
      }
    })
  }
})
