import type { AddressInfo } from "node:net"
import { embeddedPorts, type Gateway, makeGateway } from "@walletgate/core"
import {
  allConformanceCases,
  declaredLengthCases,
  makeConformanceGateway,
  refusedBodyThenNext,
  runConformance,
  SmsOutbox,
  sendOverHttp,
  sendOverSocket
} from "@walletgate/core/testing"
import { walletgate } from "@walletgate/express"
import { Layer, Logger } from "effect"
import express from "express"
import { createRemoteJWKSet, jwtVerify } from "jose"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const listen = async (app: express.Express) => {
  const server = app.listen(0, "127.0.0.1")
  await new Promise<void>((resolve) => server.once("listening", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

const postJson = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body)
  })

describe("conformance: Express", () => {
  const targets = {
    "mounted at the root": (gateway: Gateway) => express().use(walletgate(gateway)),
    "under /wallet": (gateway: Gateway) => express().use("/wallet", walletgate(gateway)),
    // The gateway's own base path, the middleware at the root, the host's other routes beside it.
    "under the gateway's basePath /wallet": (gateway: Gateway) =>
      express()
        .use(walletgate(gateway))
        .get("/other", (_req, res) => {
          res.send("host")
        }),
    "behind the host's express.json()": (gateway: Gateway) =>
      // The host parses JSON itself but leaves other media types (and bad bodies) to walletgate.
      express().use("/wallet", express.json({ limit: "1mb" }), walletgate(gateway))
  }
  for (const [name, build] of Object.entries(targets)) {
    it(`passes every case ${name}`, async () => {
      const gateway = makeConformanceGateway(name.includes("basePath") ? { basePath: "/wallet" } : {})
      const server = await listen(build(gateway))
      const base = name === "mounted at the root" ? server.url : `${server.url}/wallet`
      try {
        const results = await runConformance(sendOverHttp(base))
        const failing = Object.entries(results).filter(([, problems]) => problems.length > 0)
        // Bodies the host parser already rejects never reach walletgate; that is the host's choice.
        const hostOwned = name.startsWith("behind") ? ["malformed JSON", "not UTF-8", "over the limit"] : []
        expect(failing.filter(([caseName]) => !hostOwned.some((part) => caseName.includes(part)))).toEqual([])
        expect(Object.keys(results)).toHaveLength(allConformanceCases.length)
      } finally {
        await server.close()
        await gateway.dispose()
      }
    })
  }
})

describe("a body declared larger than the limit, through Express", () => {
  for (const [name, mounted] of Object.entries({ "at the root": "", "under /wallet": "/wallet" })) {
    it(`is refused at once with 413 and the connection closed, mounted ${name}`, async () => {
      const gateway = makeConformanceGateway()
      const server = await listen(express().use(mounted === "" ? "/" : mounted, walletgate(gateway)))
      try {
        // Only 2 of the declared bytes are sent: the answer comes only if nothing waits for the rest.
        const results = await runConformance(sendOverSocket(`${server.url}${mounted}`), declaredLengthCases)
        expect(Object.entries(results).filter(([, problems]) => problems.length > 0)).toEqual([])
        // The next request, on a new connection, is answered as usual.
        expect((await fetch(`${server.url}${mounted}/functions/v1/.well-known/jwks.json`)).status).toBe(200)
      } finally {
        await server.close()
        await gateway.dispose()
      }
    })
  }
})

describe("a refused body and the next request on the same pooled connection, through Express", () => {
  for (const framing of ["declared", "chunked"] as const) {
    it(`answers 413, then the next request 200 (body of 2 MB, ${framing} length)`, async () => {
      const gateway = makeConformanceGateway()
      const server = await listen(express().use(walletgate(gateway)))
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

describe("phone sign-in through Express on a real server", () => {
  const lines: Array<string> = []
  // The JSON logger's real output, annotations and causes included.
  const capture = Logger.map(Logger.formatJson, (line) => {
    lines.push(line)
  })
  const outbox = new SmsOutbox()
  const gateway = makeGateway({
    ports: Layer.mergeAll(embeddedPorts({ otp: { sendsPerIpPerHour: 1000 } }), outbox.layer),
    loggers: [capture]
  })
  let server: Awaited<ReturnType<typeof listen>>
  const secrets: Array<string> = []

  beforeAll(async () => {
    const app = express()
    app.get("/health", (_req, res) => {
      res.json({ ok: true })
    })
    app.use("/wallet", walletgate(gateway))
    server = await listen(app)
  })
  afterAll(async () => {
    await server.close()
    await gateway.dispose()
  })

  it("signs in end to end, and the JWT verifies against the published JWKS", async () => {
    const phone = "+14155552671"
    const sent = await postJson(`${server.url}/wallet/functions/v1/signInWithOTP`, { phone: "+1 (415) 555-2671" })
    expect(sent.status).toBe(200)
    expect(await sent.json()).toEqual({ sent: true, expires_in: 300, resend_after: 60 })
    const code = outbox.latestCode(phone)
    expect(code).toMatch(/^\d{6}$/)
    secrets.push(code as string)

    const verified = await postJson(`${server.url}/wallet/functions/v1/verifyOTP`, { phone, token: code })
    expect(verified.status).toBe(200)
    const session = (await verified.json()) as { access_token: string; expires_at: number; user: { id: string } }
    secrets.push(session.access_token)
    const jwks = createRemoteJWKSet(new URL(`${server.url}/wallet/functions/v1/.well-known/jwks.json`))
    const { payload, protectedHeader } = await jwtVerify(session.access_token, jwks, {
      issuer: "walletgate",
      audience: "walletgate:user",
      algorithms: ["EdDSA"],
      requiredClaims: ["exp", "iat", "sub"]
    })
    expect(payload.sub).toBe(session.user.id)
    expect(payload.exp).toBe(session.expires_at)
    expect(protectedHeader.typ).toBe("user+jwt")
    // The host's own routes still answer.
    expect((await fetch(`${server.url}/health`)).status).toBe(200)
  })

  it("50 concurrent verifications with the right code yield exactly one token", async () => {
    const phone = "+12127363100"
    await postJson(`${server.url}/wallet/functions/v1/signInWithOTP`, { phone })
    const token = outbox.latestCode(phone) as string
    secrets.push(token)
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => postJson(`${server.url}/wallet/functions/v1/verifyOTP`, { phone, token }))
    )
    const statuses = answers.map((answer) => answer.status)
    expect(statuses.filter((status) => status === 200)).toHaveLength(1)
    expect(statuses.filter((status) => status === 401)).toHaveLength(49)
  })

  it("20 concurrent sign-in requests for one phone send exactly one SMS", async () => {
    const phone = "+13127445000"
    const before = outbox.messages.length
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => postJson(`${server.url}/wallet/functions/v1/signInWithOTP`, { phone }))
    )
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, ...new Array(19).fill(429)])
    expect(outbox.messages.slice(before).filter((message) => message.to === phone)).toHaveLength(1)
  })

  it("never writes a code, a JWT or a phone number to the log", () => {
    expect(lines.length).toBeGreaterThan(10)
    expect(secrets.length).toBeGreaterThanOrEqual(3)
    const log = lines.join("\n")
    for (const secret of secrets) expect(log).not.toContain(secret)
    expect(log).not.toMatch(/4155552671|2127363100|3127445000/)
    expect(log).toContain("***2671")
  })
})

describe("client IP", () => {
  const seen = async (trustProxy: boolean) => {
    const gateway = makeGateway({ ports: embeddedPorts({ otp: { sendsPerIpPerHour: 1 } }), loggers: [] })
    const app = express()
    app.set("trust proxy", trustProxy)
    app.use(walletgate(gateway))
    const server = await listen(app)
    try {
      // Two phones, two forwarded addresses: only a trusted proxy makes them two clients.
      const first = await postJson(
        `${server.url}/functions/v1/signInWithOTP`,
        { phone: "+14155552671" },
        { "x-forwarded-for": "203.0.113.1" }
      )
      const second = await postJson(
        `${server.url}/functions/v1/signInWithOTP`,
        { phone: "+14169671111" },
        { "x-forwarded-for": "203.0.113.2" }
      )
      return [first.status, second.status]
    } finally {
      await server.close()
      await gateway.dispose()
    }
  }
  it("is the socket address unless Express trusts the proxy", async () => {
    expect(await seen(false)).toEqual([200, 429])
    expect(await seen(true)).toEqual([200, 200])
  })
})
