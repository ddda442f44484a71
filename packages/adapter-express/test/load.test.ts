import {
  CONFORMANCE_API_KEY,
  CONFORMANCE_CLIENT,
  makeConformanceGateway,
  serveListener
} from "@walletgate/core/testing"
import { walletgate } from "@walletgate/express"
import express from "express"
import { describe, expect, it } from "vitest"

/** One kind of request in the mix, and the statuses it may be answered with. */
interface Kind {
  readonly method: string
  readonly path: (i: number) => string
  readonly body?: (i: number) => unknown
  readonly headers?: Record<string, string>
  readonly expected: ReadonlyArray<number>
}

const json = { "content-type": "application/json" }
const MIX: ReadonlyArray<Kind> = [
  { method: "GET", path: () => "/functions/v1/.well-known/jwks.json", expected: [200] },
  // The conformance gateway's test phones +15005550001…20 send no SMS; resends within 60 s are 429.
  {
    method: "POST",
    path: () => "/functions/v1/signInWithOTP",
    body: (i) => ({ phone: `+1500555${String((i % 20) + 1).padStart(4, "0")}` }),
    headers: json,
    expected: [200, 429]
  },
  {
    method: "POST",
    path: () => "/functions/v1/verifyOTP",
    body: (i) => ({ phone: `+1500555${String((i % 20) + 1).padStart(4, "0")}`, token: "000000" }),
    headers: json,
    expected: [401]
  },
  {
    method: "POST",
    path: () => "/v1/auth",
    body: () => ({ client_id: CONFORMANCE_CLIENT.clientId, client_secret: CONFORMANCE_CLIENT.clientSecret }),
    headers: json,
    // One client gets 120 access tokens a minute; the other 880 of the run are 429.
    expected: [200, 429]
  },
  {
    method: "POST",
    path: () => "/v1/auth",
    body: () => ({ client_id: "x", client_secret: "y" }),
    headers: json,
    expected: [401]
  },
  { method: "POST", path: () => "/v1/kernel/tx", body: () => ({ userId: "phone:x" }), headers: json, expected: [401] },
  {
    method: "POST",
    path: () => "/v1/anvil/account/0x000000000000000000000000000000000000dEaD/payout/disperse",
    body: () => ({}),
    headers: { ...json, "x-api-key": CONFORMANCE_API_KEY },
    expected: [404]
  },
  { method: "POST", path: () => "/functions/v1/signInWithOTP", body: () => "{oops", headers: json, expected: [400] },
  { method: "GET", path: (i) => `/nope/${i}`, expected: [404] },
  { method: "GET", path: () => "/v1/health", expected: [200] }
]

const socketHandles = () =>
  process.getActiveResourcesInfo().filter((resource) => resource === "TCPSocketWrap" || resource === "TCPServerWrap")
    .length

describe("load: 10 000 mixed requests at concurrency 100 through Express", () => {
  it("answers every one as expected and leaves no handle behind", async () => {
    const baseline = socketHandles()
    const gateway = makeConformanceGateway()
    const server = await serveListener(express().use(walletgate(gateway)))
    const base = server.url
    const unexpected: Array<string> = []
    let next = 0
    let answered = 0
    const worker = async () => {
      while (next < 10_000) {
        const i = next++
        const kind = MIX[i % MIX.length] as Kind
        const body = kind.body?.(i)
        const response = await fetch(`${base}${kind.path(i)}`, {
          method: kind.method,
          headers: kind.headers ?? {},
          ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
        })
        await response.arrayBuffer()
        answered++
        if (!kind.expected.includes(response.status))
          unexpected.push(`${kind.method} ${kind.path(i)} → ${response.status}`)
      }
    }
    await Promise.all(Array.from({ length: 100 }, worker))
    await server.close()
    await gateway.dispose()

    expect(unexpected.slice(0, 10)).toEqual([])
    expect(answered).toBe(10_000)
    // Sockets close asynchronously; give them a bounded moment.
    for (let wait = 0; wait < 100 && socketHandles() > baseline; wait++)
      await new Promise((resolve) => setTimeout(resolve, 20))
    expect(socketHandles()).toBeLessThanOrEqual(baseline)
  }, 120_000)
})
