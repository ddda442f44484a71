import { type Gateway, readBodyWithin } from "@walletgate/core"
import { type ConformanceRequest, makeConformanceGateway, runConformance } from "@walletgate/core/testing"
import { describe, expect, it } from "vitest"

const bytes = (body: string | Uint8Array | undefined) =>
  body === undefined ? undefined : typeof body === "string" ? new TextEncoder().encode(body) : body

const viaHandle = (gateway: Gateway) => async (request: ConformanceRequest) => {
  const [path = "", query = ""] = request.path.split("?")
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
  return { status: response.status, headers: response.headers, body: response.body }
}

const viaFetch = (gateway: Gateway) => async (request: ConformanceRequest) => {
  const response = await gateway.fetch(
    new Request(`http://gateway.test${request.path}`, {
      method: request.method,
      headers: request.headers ?? {},
      ...(request.body === undefined ? {} : { body: request.body })
    })
  )
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    headers[name] = value
  })
  return { status: response.status, headers, body: await response.text() }
}

describe("conformance: the neutral core", () => {
  for (const [name, target] of Object.entries({ "gateway.handle": viaHandle, "gateway.fetch": viaFetch })) {
    it(`${name} passes every case`, async () => {
      const gateway = makeConformanceGateway()
      try {
        const results = await runConformance(target(gateway))
        expect(Object.entries(results).filter(([, problems]) => problems.length > 0)).toEqual([])
      } finally {
        await gateway.dispose()
      }
    })
  }

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
})
