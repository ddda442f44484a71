import {
  CONFORMANCE_API_KEY,
  CONFORMANCE_CLIENT,
  makeConformanceGateway,
  serveListener
} from "@walletgate/core/testing"
import { walletgate } from "@walletgate/express"
import express from "express"
import { describe, expect, it } from "vitest"

/** One kind of request in the mix (every tenth request), and how many of its 1,000 answers have each status. */
interface Kind {
  readonly method: string
  readonly path: (i: number) => string
  readonly body?: (i: number) => unknown
  readonly headers?: Record<string, string>
  readonly expected: Readonly<Record<number, number>>
}

/** The test phone of the `i`th request: the kinds' every tenth request cycles through +15005550001…20. */
const testPhone = (i: number) => `+1500555${String((Math.floor(i / 10) % 20) + 1).padStart(4, "0")}`

const json = { "content-type": "application/json" }
const MIX: ReadonlyArray<Kind> = [
  { method: "GET", path: () => "/functions/v1/.well-known/jwks.json", expected: { 200: 1000 } },
  // The conformance gateway's test phones send no SMS: each of the 20 is sent one code, its resends within 60 s are 429.
  {
    method: "POST",
    path: () => "/functions/v1/signInWithOTP",
    body: (i) => ({ phone: testPhone(i) }),
    headers: json,
    expected: { 200: 20, 429: 980 }
  },
  {
    method: "POST",
    path: () => "/functions/v1/verifyOTP",
    body: (i) => ({ phone: testPhone(i), token: "000000" }),
    headers: json,
    expected: { 401: 1000 }
  },
  {
    method: "POST",
    path: () => "/v1/auth",
    body: () => ({ client_id: CONFORMANCE_CLIENT.clientId, client_secret: CONFORMANCE_CLIENT.clientSecret }),
    headers: json,
    // One client gets 120 access tokens a minute; the other 880 of the run are 429 (see GRANTS_PER_MINUTE).
    expected: { 200: 120, 429: 880 }
  },
  {
    method: "POST",
    path: () => "/v1/auth",
    body: () => ({ client_id: "x", client_secret: "y" }),
    headers: json,
    expected: { 401: 1000 }
  },
  {
    method: "POST",
    path: () => "/v1/kernel/tx",
    body: () => ({ userId: "phone:x" }),
    headers: json,
    expected: { 401: 1000 }
  },
  {
    method: "POST",
    path: () => "/v1/anvil/account/0x000000000000000000000000000000000000dEaD/payout/disperse",
    body: () => ({}),
    headers: { ...json, "x-api-key": CONFORMANCE_API_KEY },
    expected: { 404: 1000 }
  },
  {
    method: "POST",
    path: () => "/functions/v1/signInWithOTP",
    body: () => "{oops",
    headers: json,
    expected: { 400: 1000 }
  },
  { method: "GET", path: (i) => `/nope/${i}`, expected: { 404: 1000 } },
  { method: "GET", path: () => "/v1/health", expected: { 200: 1000 } }
]

/** The mix's client-credentials grants, and how many the conformance app is given a minute. */
const GRANTS = 3
const GRANTS_PER_MINUTE = 120

const socketHandles = () =>
  process.getActiveResourcesInfo().filter((resource) => resource === "TCPSocketWrap" || resource === "TCPServerWrap")
    .length

describe("load: 10 000 mixed requests at concurrency 100 through Express", () => {
  it("answers every one as expected and leaves no handle behind", async () => {
    const baseline = socketHandles()
    const gateway = makeConformanceGateway()
    const server = await serveListener(express().use(walletgate(gateway)))
    const base = server.url
    // Per kind, how many answers had each status.
    const answers = MIX.map(() => ({}) as Record<number, number>)
    const startedAt = Date.now()
    let next = 0
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
        const counts = answers[i % MIX.length] ?? {}
        counts[response.status] = (counts[response.status] ?? 0) + 1
      }
    }
    await Promise.all(Array.from({ length: 100 }, worker))
    await server.close()
    await gateway.dispose()

    // The grants' limit counts in minutes aligned to the clock: a run across a minute's end has 120 more to give.
    const minutes = Math.floor(Date.now() / 60_000) - Math.floor(startedAt / 60_000) + 1
    const grants = answers[GRANTS]?.[200] ?? 0
    if (minutes > 1) expect(grants).toBeLessThanOrEqual(GRANTS_PER_MINUTE * minutes)
    const expected = MIX.map((kind, index) =>
      index === GRANTS && minutes > 1 ? { 200: grants, 429: 1000 - grants } : kind.expected
    )
    expect(answers).toEqual(expected)
    // Sockets close asynchronously; give them a bounded moment.
    for (let wait = 0; wait < 100 && socketHandles() > baseline; wait++)
      await new Promise((resolve) => setTimeout(resolve, 20))
    expect(socketHandles()).toBeLessThanOrEqual(baseline)
  }, 120_000)
})
