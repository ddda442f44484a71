import { embeddedPorts, makeGateway } from "@walletgate/core"
import { SmsOutbox, serveListener } from "@walletgate/core/testing"
import { walletgate } from "@walletgate/express"
import { Layer, Logger } from "effect"
import express from "express"
import { createRemoteJWKSet, jwtVerify } from "jose"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const postJson = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body)
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
  let server: Awaited<ReturnType<typeof serveListener>>
  const secrets: Array<string> = []

  beforeAll(async () => {
    const app = express()
    app.get("/health", (_req, res) => {
      res.json({ ok: true })
    })
    app.use("/wallet", walletgate(gateway))
    server = await serveListener(app)
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
    const server = await serveListener(app)
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
