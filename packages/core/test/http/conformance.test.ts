import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Readable } from "node:stream"
import { embeddedPorts, type Gateway, makeGateway } from "@walletgate/core"
import { readBodyWithin } from "@walletgate/core/adapter"
import {
  type ConformanceRequest,
  makeConformanceGateway,
  refusedBodyThenNext,
  responseOfFetch,
  runConformance,
  SmsOutbox
} from "@walletgate/core/testing"
import * as Layer from "effect/Layer"
import { afterEach, describe, expect, it } from "vitest"

const bytes = (body: string | Uint8Array | undefined) =>
  body === undefined ? undefined : typeof body === "string" ? new TextEncoder().encode(body) : body

/** `gateway.handle` as a target: the request as an adapter would hand it, the answer as a client would read it. */
const viaHandle =
  (gateway: Gateway, base = "") =>
  async (request: ConformanceRequest) => {
    const [path = "", query = ""] = `${base}${request.path}`.split("?")
    const body = bytes(request.body)
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(request.headers ?? {})) headers[name.toLowerCase()] = value
    if (body !== undefined) headers["content-length"] = String(body.byteLength)
    const rawBody = body === undefined ? undefined : await readBodyWithin([body], gateway.bodyLimit)
    const response = await gateway.handle({
      method: request.method,
      path,
      query: new URLSearchParams(query),
      headers,
      remoteAddress: "127.0.0.1",
      ...(rawBody === undefined ? {} : { rawBody })
    })
    const { "set-cookie": setCookie, ...rest } = response.headers
    const joined = Object.fromEntries(
      Object.entries(rest).map(([name, value]) => [name, typeof value === "string" ? value : value.join(", ")])
    )
    const cookies = setCookie === undefined ? [] : typeof setCookie === "string" ? [setCookie] : [...setCookie]
    return { status: response.status, headers: joined, setCookie: cookies, body: response.body }
  }

const viaFetch =
  (gateway: Gateway, base = "") =>
  async (request: ConformanceRequest) =>
    responseOfFetch(
      await gateway.fetch(
        new Request(`http://gateway.test${base}${request.path}`, {
          method: request.method,
          headers: request.headers ?? {},
          ...(request.body === undefined ? {} : { body: request.body })
        }),
        { remoteAddress: "127.0.0.1" }
      )
    )

describe("conformance: the neutral core", () => {
  for (const [name, target] of Object.entries({ "gateway.handle": viaHandle, "gateway.fetch": viaFetch })) {
    for (const base of ["", "/wallet"]) {
      it(`${name} passes every case ${base === "" ? "unmounted" : `mounted under ${base}`}`, async () => {
        const gateway = makeConformanceGateway(base === "" ? {} : { basePath: base })
        try {
          const results = await runConformance(target(gateway, base))
          expect(Object.entries(results).filter(([, problems]) => problems.length > 0)).toEqual([])
        } finally {
          await gateway.dispose()
        }
      })
    }
  }

  it("mounted under /wallet, answers nothing outside it, and 404 for what is outside", async () => {
    const gateway = makeConformanceGateway({ basePath: "/wallet/" })
    try {
      const statusOf = async (path: string) => (await viaFetch(gateway)({ method: "GET", path })).status
      expect(await statusOf("/wallet/v1/health")).toBe(200)
      expect(await statusOf("/v1/health")).toBe(404)
      expect(await statusOf("/walletx/v1/health")).toBe(404)
      expect(await statusOf("/wallet")).toBe(404)
      const outside = await viaHandle(gateway)({ method: "GET", path: "/v1/health" })
      expect(JSON.parse(outside.body)).toMatchObject({ code: "not_found" })
    } finally {
      await gateway.dispose()
    }
  })

  it("refuses a basePath that does not start with a slash", () => {
    expect(() => makeConformanceGateway({ basePath: "wallet" })).toThrow(TypeError)
  })

  it("a deliberate difference fails the table", async () => {
    const gateway = makeConformanceGateway()
    const drifting: Gateway = {
      ...gateway,
      handle: async (request) => {
        const response = await gateway.handle(request)
        return response.status === 405 ? { ...response, headers: { ...response.headers, allow: "GET" } } : response
      }
    }
    try {
      const results = await runConformance(viaHandle(drifting))
      expect(results["wrong method is 405 with Allow"]).toEqual(["header allow: GET, expected POST"])
    } finally {
      await gateway.dispose()
    }
  })

  it("a target that joins Set-Cookie fields, or sends a HEAD a body, fails the table", async () => {
    const gateway = makeConformanceGateway()
    const joining: Gateway = {
      ...gateway,
      handle: async (request) => {
        const response = await gateway.handle(request)
        const cookies = response.headers["set-cookie"]
        return typeof cookies === "object"
          ? { ...response, headers: { ...response.headers, "set-cookie": cookies.join(", ") } }
          : response
      }
    }
    const bodied: Gateway = { ...gateway, handle: (request) => gateway.handle({ ...request, method: "GET" }) }
    try {
      const joined = await runConformance(viaHandle(joining))
      expect(joined["two Set-Cookie fields arrive whole and apart"]?.[0]).toMatch(/^set-cookie /)
      const headless = await runConformance(viaHandle(bodied))
      expect(
        Object.entries(headless).filter(([name, problems]) => name.startsWith("HEAD") && problems.length > 0).length
      ).toBeGreaterThan(0)
    } finally {
      await gateway.dispose()
    }
  })
})

// Through `fetch`, the runtime passes the client's address: the per-IP sign-in cap holds there as in every adapter.
const AREA_CODES = [212, 415, 312, 646, 617, 202, 305, 713, 206, 303, 404, 503, 602, 702, 801, 214, 215, 216, 310, 313]
const phone = (i: number) =>
  `+1${AREA_CODES[i % AREA_CODES.length]}${230 + Math.floor(i / AREA_CODES.length)}${1000 + i}`

describe("the per-IP sign-in cap through gateway.fetch", () => {
  let gateway: Gateway | undefined
  afterEach(async () => {
    await gateway?.dispose()
  })
  const signIn = async (target: Gateway, i: number, remoteAddress?: string) =>
    (
      await target.fetch(
        new Request("http://gateway.test/functions/v1/signInWithOTP", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ phone: phone(i) })
        }),
        { remoteAddress }
      )
    ).status

  it("holds per address: 20 sign-ins from one client, the 21st refused, another client still served", async () => {
    const outbox = new SmsOutbox()
    gateway = makeGateway({ ports: Layer.mergeAll(embeddedPorts(), outbox.layer), loggers: [] })
    const statuses = []
    for (let i = 0; i < 21; i++) statuses.push(await signIn(gateway, i, "198.51.100.7"))
    expect(statuses.slice(0, 20).every((status) => status === 200)).toBe(true)
    expect(statuses[20]).toBe(429)
    expect(await signIn(gateway, 21, "203.0.113.9")).toBe(200)
    expect(outbox.messages).toHaveLength(21)
  })

  it("without an address, every request shares one budget (fail closed)", async () => {
    const outbox = new SmsOutbox()
    gateway = makeGateway({ ports: Layer.mergeAll(embeddedPorts(), outbox.layer), loggers: [] })
    const statuses = []
    for (let i = 0; i < 21; i++) statuses.push(await signIn(gateway, i))
    expect(statuses).toContain(429)
    // Another client with no address is refused too: one shared budget.
    expect(await signIn(gateway, 22)).toBe(429)
  })
})

/**
 * `gateway.fetch` behind a `node:http` server, as a fetch-style runtime on Node serves it: the request's body is the
 * socket's stream, the answer's headers (`Connection: close` among them) are written as they are.
 */
const serveFetch = async (gateway: Gateway) => {
  const server = createServer((req, res) => {
    const body = req.method === "GET" || req.method === "HEAD" ? undefined : (Readable.toWeb(req) as ReadableStream)
    const headers = new Headers()
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === "string") headers.set(name, value)
    }
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method ?? "GET",
      headers,
      ...(body === undefined ? {} : { body, duplex: "half" })
    })
    void gateway.fetch(request, { remoteAddress: "127.0.0.1" }).then(async (response) => {
      res.writeHead(response.status, Object.fromEntries(response.headers))
      res.end(Buffer.from(await response.arrayBuffer()))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}

describe("a refused body and the next request on the same pooled connection, through gateway.fetch", () => {
  for (const framing of ["declared", "chunked"] as const) {
    it(`answers 413, then the next request 200 (body of 2 MB, ${framing} length)`, async () => {
      const gateway = makeConformanceGateway()
      const server = await serveFetch(gateway)
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
