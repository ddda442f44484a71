import {
  allConformanceCases,
  type ConformanceTarget,
  conformanceChecks,
  type Echo,
  type EchoGateway,
  echoGateway,
  httpMount,
  makeConformanceGateway,
  serveListener
} from "@walletgate/core/testing"
import { walletgate } from "@walletgate/koa"
import Koa from "koa"
import { afterEach, describe, expect, it } from "vitest"
import { hostJsonParser, koaApp } from "./host"

const servers: Array<ConformanceTarget> = []

afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

/** Starts `app` on 127.0.0.1 and a free port; the server is closed after the test. */
const serve = async (app: Koa): Promise<string> => {
  const server = await serveListener(app.callback())
  servers.push(server)
  return server.url
}

/** The one request the gateway received. */
const only = (gateway: EchoGateway) => {
  expect(gateway.received).toHaveLength(1)
  const [request] = gateway.received
  if (request === undefined) throw new Error("unreachable: the length was checked")
  return request
}

describe("walletgate (Koa)", () => {
  it("passes method, percent-encoded path, query and lower-case headers through", async () => {
    const gateway = echoGateway()
    const app = new Koa()
    app.use(walletgate(gateway))
    const url = await serve(app)

    const response = await fetch(`${url}/v1/a%20b/%C3%A9?x=1&x=2&e=%C3%A9&plus=a+b`, {
      headers: { "X-Custom": "one", accept: "application/json" }
    })

    const request = only(gateway)
    expect(request.method).toBe("GET")
    expect(request.path).toBe("/v1/a%20b/%C3%A9")
    expect(request.query.getAll("x")).toEqual(["1", "2"])
    expect(request.query.get("e")).toBe("é")
    expect(request.query.get("plus")).toBe("a b")
    expect(request.headers["x-custom"]).toBe("one")
    expect(request.headers.accept).toBe("application/json")
    expect(request.body).toBeUndefined()
    expect(request.rawBody).toBeUndefined()
    const echo = (await response.json()) as Echo
    expect(echo.path).toBe("/v1/a%20b/%C3%A9")
    expect(echo.query).toEqual([
      ["x", "1"],
      ["x", "2"],
      ["e", "é"],
      ["plus", "a b"]
    ])
  })

  it("writes status, headers and body back exactly as the core gave them", async () => {
    const gateway = echoGateway()
    gateway.respondWith({
      status: 418,
      headers: { "content-type": "application/problem+json", "x-request-id": "req-1", "cache-control": "no-store" },
      body: '{"code":"teapot"}'
    })
    const app = new Koa()
    app.use(walletgate(gateway))
    const url = await serve(app)

    const response = await fetch(`${url}/anything`)

    expect(response.status).toBe(418)
    expect(response.headers.get("content-type")).toBe("application/problem+json")
    expect(response.headers.get("x-request-id")).toBe("req-1")
    expect(response.headers.get("cache-control")).toBe("no-store")
    expect(response.headers.get("content-length")).toBe("17")
    expect(await response.text()).toBe('{"code":"teapot"}')
  })

  it("adds no content-type of its own to an empty answer", async () => {
    const gateway = echoGateway()
    gateway.respondWith({ status: 200, headers: { "x-request-id": "req-2" }, body: "" })
    const app = new Koa()
    app.use(walletgate(gateway))
    const url = await serve(app)

    const response = await fetch(`${url}/empty`)

    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBeNull()
    expect(await response.text()).toBe("")
  })

  it("answers below the gateway's basePath, which the gateway strips, and leaves everything else to the host", async () => {
    const gateway = makeConformanceGateway({ basePath: "/wallet/" })
    const app = new Koa()
    app.use(walletgate(gateway))
    app.use((ctx) => {
      ctx.body = `host ${ctx.path}`
    })
    const url = await serve(app)
    try {
      const answers = async (...targets: Array<string>) =>
        Promise.all(targets.map(async (target) => `${(await fetch(`${url}${target}`)).status} ${target}`))
      expect(await answers("/wallet/v1/health", "/wallet", "/walletx", "/other", "/v1/health")).toEqual([
        "200 /wallet/v1/health",
        "404 /wallet",
        "200 /walletx",
        "200 /other",
        "200 /v1/health"
      ])
      expect(await (await fetch(`${url}/walletx`)).text()).toBe("host /walletx")
      expect(await (await fetch(`${url}/v1/health`)).text()).toBe("host /v1/health")
    } finally {
      await gateway.dispose()
    }
  })

  it("answers below a mount point that rewrote ctx.path, as koa-mount does", async () => {
    const gateway = echoGateway()
    const inner = walletgate(gateway)
    const app = new Koa()
    // What koa-mount does around the middleware it mounts at "/mounted".
    app.use(async (ctx, next) => {
      const original = ctx.path
      ctx.path = original.slice("/mounted".length) || "/"
      await inner(ctx, next)
      ctx.path = original
    })
    const url = await serve(app)

    await fetch(`${url}/mounted/v1/x?y=1`)

    const request = only(gateway)
    expect(request.path).toBe("/v1/x")
    expect(request.query.get("y")).toBe("1")
  })

  it("reads the body itself, as the bytes the client sent, when no body parser ran", async () => {
    const gateway = echoGateway()
    const app = new Koa()
    app.use(walletgate(gateway))
    const url = await serve(app)
    const sent = '{ "phone":"+12025550123",\n  "note": "é ✓" }'

    await fetch(`${url}/v1/x`, { method: "POST", headers: { "content-type": "application/json" }, body: sent })

    const request = only(gateway)
    expect(request.body).toBeUndefined()
    expect(request.rawBody).toEqual(new TextEncoder().encode(sent))
    expect(request.headers["content-type"]).toBe("application/json")
  })

  it("passes no body for an empty one", async () => {
    const gateway = echoGateway()
    const app = new Koa()
    app.use(walletgate(gateway))
    const url = await serve(app)

    await fetch(`${url}/v1/x`, { method: "POST", body: "" })

    expect(only(gateway).rawBody).toBeUndefined()
  })

  it("takes the body a host body parser left", async () => {
    const gateway = echoGateway()
    const app = new Koa()
    app.use(hostJsonParser({ keepRaw: false }))
    app.use(walletgate(gateway))
    const url = await serve(app)

    await fetch(`${url}/v1/x`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"a":[1,2]}' })

    const request = only(gateway)
    expect(request.body).toEqual({ a: [1, 2] })
    expect(request.rawBody).toBeUndefined()
  })

  it("prefers the raw text a host body parser kept over what it parsed", async () => {
    const gateway = echoGateway()
    const app = new Koa()
    app.use(hostJsonParser({ keepRaw: true }))
    app.use(walletgate(gateway))
    const url = await serve(app)
    const sent = '{"amount": 1.10, "to": "0xabc"}'

    await fetch(`${url}/v1/x`, { method: "POST", headers: { "content-type": "application/json" }, body: sent })

    const request = only(gateway)
    expect(request.body).toBeUndefined()
    expect(request.rawBody).toEqual(new TextEncoder().encode(sent))
  })

  it("gives the core limit + 1 bytes of an oversized body of unknown length, and the answer still reaches the client", async () => {
    const gateway = echoGateway(16)
    gateway.respondWith({ status: 413, headers: { "content-type": "application/problem+json" }, body: "{}" })
    const app = new Koa()
    app.use(walletgate(gateway))
    const url = await serve(app)

    // A stream: sent chunked, without Content-Length.
    const body = new Blob(["x".repeat(200_000)]).stream()
    const response = await fetch(`${url}/v1/x`, { method: "POST", body, duplex: "half" } as RequestInit)

    expect(response.status).toBe(413)
    expect(only(gateway).rawBody).toEqual(new TextEncoder().encode("x".repeat(17)))
  })

  it("reads none of a body declared larger than the limit", async () => {
    const gateway = echoGateway(16)
    gateway.respondWith({ status: 413, headers: { "content-type": "application/problem+json" }, body: "{}" })
    const app = new Koa()
    app.use(walletgate(gateway))
    const url = await serve(app)

    const response = await fetch(`${url}/v1/x`, { method: "POST", body: "x".repeat(200_000) })

    expect(response.status).toBe(413)
    expect(only(gateway).rawBody).toBeUndefined()
  })

  it("passes the socket's address, not X-Forwarded-For, when app.proxy is off", async () => {
    const gateway = echoGateway()
    const app = new Koa()
    app.use(walletgate(gateway))
    const url = await serve(app)

    await fetch(`${url}/ip`, { headers: { "x-forwarded-for": "203.0.113.7" } })

    expect(only(gateway).remoteAddress).toBe("127.0.0.1")
  })

  it("passes X-Forwarded-For's client when app.proxy is on", async () => {
    const gateway = echoGateway()
    const app = new Koa({ proxy: true })
    app.use(walletgate(gateway))
    const url = await serve(app)

    await fetch(`${url}/ip`, { headers: { "x-forwarded-for": "203.0.113.7" } })

    expect(only(gateway).remoteAddress).toBe("203.0.113.7")
  })
})

describe("a host middleware after walletgate's, against the conformance table", () => {
  it("a deliberate difference fails the table", async () => {
    // An adapter that lets Koa choose the content type of the body it writes, instead of the core's.
    const koaPicksTheType: Koa.Middleware = async (ctx, next) => {
      await next()
      ctx.type = "json"
    }
    const [table] = conformanceChecks([
      httpMount("with Koa picking the type", (gateway) => koaApp(koaPicksTheType, walletgate(gateway)))
    ])
    const problemCases = allConformanceCases.filter((c) => c.expect.contentType === "application/problem+json")
    expect(await table?.run()).toEqual(
      problemCases.map((c) => `${c.name}: content-type application/json, expected application/problem+json`)
    )
  })
})
