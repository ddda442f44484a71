import { embeddedPorts, makeGateway, OtpPolicy, readBodyWithin, SigningKeys } from "@walletgate/core"
import { SmsOutbox } from "@walletgate/core/testing"
import { Layer } from "effect"
import { describe, expect, it } from "vitest"

const post = (path: string, body: unknown, headers: Record<string, string> = {}) => ({
  method: "POST",
  path,
  query: new URLSearchParams(),
  headers: { "content-type": "application/json", ...headers },
  rawBody: new TextEncoder().encode(JSON.stringify(body))
})

describe("makeGateway", () => {
  it("takes a port from a later layer over the embedded one", async () => {
    const outbox = new SmsOutbox()
    const gateway = makeGateway({ ports: Layer.mergeAll(embeddedPorts(), outbox.layer), loggers: [] })
    const response = await gateway.handle(post("/functions/v1/signInWithOTP", { phone: "+14155552671" }))
    expect(response.status).toBe(200)
    expect(outbox.messages).toHaveLength(1)
    await gateway.dispose()
  })

  it("ready() rejects at start on a bad configuration", async () => {
    const gateway = makeGateway({
      ports: Layer.mergeAll(
        embeddedPorts(),
        SigningKeys.fromPrivateKey({
          issuer: "x",
          algorithm: "ES256",
          privateKey: "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----"
        })
      ),
      loggers: []
    })
    await expect(gateway.ready()).rejects.toBeDefined()
    // And a request is a 500 problem, never a crash or a stack trace.
    const response = await gateway.handle(post("/functions/v1/signInWithOTP", { phone: "+14155552671" }))
    expect(response.status).toBe(500)
    expect(JSON.parse(response.body)).toMatchObject({ code: "internal_error" })
    expect(response.body).not.toMatch(/at |Error:/)
    await gateway.dispose()
  })

  it("refuses out-of-range policies as soon as they are configured", () => {
    expect(() => OtpPolicy.layer({ codeTtlSeconds: 601 })).toThrow(
      /codeTtlSeconds must be a whole number from 1 to 600/
    )
    expect(() => makeGateway({ ports: embeddedPorts({ otp: { maxAttempts: 0 } }) })).toThrow(/maxAttempts/)
    expect(() => makeGateway({ bodyLimit: 0 })).toThrow(/bodyLimit/)
  })

  it("answers 413 from Content-Length alone, before reading a body", async () => {
    const gateway = makeGateway({ bodyLimit: 10, loggers: [] })
    const response = await gateway.handle({
      ...post("/functions/v1/signInWithOTP", {}),
      rawBody: new Uint8Array(),
      headers: { "content-type": "application/json", "content-length": "11" }
    })
    expect(response.status).toBe(413)
    await gateway.dispose()
  })
})

describe("readBodyWithin", () => {
  it("stops reading one byte past the limit", async () => {
    let pulled = 0
    async function* source() {
      for (let i = 0; i < 100; i++) {
        pulled++
        yield new Uint8Array(10).fill(i)
      }
    }
    const body = await readBodyWithin(source(), 25)
    expect(body.byteLength).toBe(26)
    expect(pulled).toBe(3)
    expect(Array.from(body.subarray(20))).toEqual([2, 2, 2, 2, 2, 2])
  })

  it("keeps strings as UTF-8", async () => {
    expect(new TextDecoder().decode(await readBodyWithin(["hé", "llo"], 100))).toBe("héllo")
  })
})
