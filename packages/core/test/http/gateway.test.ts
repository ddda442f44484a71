import { PassThrough, Readable } from "node:stream"
import { embeddedPorts, makeGateway, OtpPolicy, OtpStore, SigningKeys, StoreUnavailable } from "@walletgate/core"
import { handleReadingBody, readBodyWithin, readRequestBody, singleValuedHeaders } from "@walletgate/core/adapter"
import { SmsOutbox } from "@walletgate/core/testing"
import { Effect, Layer, Logger, References } from "effect"
import { describe, expect, it } from "vitest"

const post = (path: string, body: unknown, headers: Record<string, string> = {}) => ({
  method: "POST",
  path,
  query: new URLSearchParams(),
  headers: { "content-type": "application/json", ...headers },
  rawBody: new TextEncoder().encode(JSON.stringify(body))
})

const get = (path: string) => ({ method: "GET", path, query: new URLSearchParams(), headers: {} })

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
    // node:crypto refuses the key's bytes, which the refusal does not show.
    await expect(gateway.ready()).rejects.toMatchObject({
      name: "TypeError",
      message: "the signing key is not a private ES256 key (PKCS#8 PEM)"
    })
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

  it("decodes a body by its schema: unknown fields are ignored, a wrong one is named however often it comes", async () => {
    const outbox = new SmsOutbox()
    const gateway = makeGateway({ ports: Layer.mergeAll(embeddedPorts(), outbox.layer), loggers: [] })
    const accepted = await gateway.handle(post("/functions/v1/signInWithOTP", { phone: "+14155552671", extra: [1] }))
    expect(accepted.status).toBe(200)
    // The first refusal and the ones after it (a decoder compiled on first use) list the same problems.
    for (let attempt = 0; attempt < 3; attempt++) {
      const refused = await gateway.handle(post("/functions/v1/verifyOTP", { phone: 7, token: "12345" }))
      expect(refused.status).toBe(400)
      expect(JSON.parse(refused.body)).toMatchObject({
        code: "invalid_request",
        errors: [
          { path: "/phone", message: "Expected a string" },
          { path: "/token", message: "Expected a string of 6 digits" }
        ]
      })
    }
    await gateway.dispose()
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

describe("readBodyWithin on a Node stream", () => {
  const stream = (...chunks: Array<string>) => Readable.from(chunks.map((chunk) => Buffer.from(chunk)))

  it("reads every chunk through to the end", async () => {
    expect(new TextDecoder().decode(await readBodyWithin(stream('{"phone":', '"+14155552671"}'), 100))).toBe(
      '{"phone":"+14155552671"}'
    )
  })

  it("stops one byte past the limit and destroys the stream", async () => {
    const source = new PassThrough()
    const read = readBodyWithin(source, 5)
    source.write(Buffer.from("abc"))
    source.write(Buffer.from("defgh"))
    const body = await read
    expect(new TextDecoder().decode(body)).toBe("abcdef")
    expect(source.destroyed).toBe(true)
  })

  it("rejects when the stream fails or closes before its end", async () => {
    const failing = new PassThrough()
    const failed = readBodyWithin(failing, 100)
    failing.destroy(new Error("connection reset"))
    await expect(failed).rejects.toThrow("connection reset")
    const closing = new PassThrough()
    const closed = readBodyWithin(closing, 100)
    closing.write("partial")
    closing.destroy()
    await expect(closed).rejects.toMatchObject({ code: "ERR_STREAM_PREMATURE_CLOSE" })
  })

  it("answers an empty body for a stream a host already read", async () => {
    const consumed = stream("gone")
    for await (const _ of consumed) {
      // drained, as a host body parser would
    }
    expect((await readBodyWithin(consumed, 100)).byteLength).toBe(0)
  })
})

describe("readRequestBody", () => {
  /** A streamed body of `chunks` chunks of 10 bytes, counting how many were pulled. */
  const streamed = (chunks: number) => {
    const counter = { pulled: 0 }
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (counter.pulled === chunks) return controller.close()
        counter.pulled++
        controller.enqueue(new Uint8Array(10).fill(counter.pulled))
      }
    })
    return { stream, counter }
  }
  const postOf = (body: BodyInit | null, headers: Record<string, string> = {}) =>
    new Request("http://gateway.test/", { method: "POST", body, headers, duplex: "half" } as RequestInit)

  it("reads a body of declared length within the limit whole", async () => {
    const body = await readRequestBody(postOf('{"phone":"+14155552671"}', { "content-length": "24" }), 100)
    expect(new TextDecoder().decode(body)).toBe('{"phone":"+14155552671"}')
  })

  it("reads nothing of a body declared larger than the limit: the core refuses it by its header", async () => {
    const request = postOf(streamed(100).stream, { "content-length": "1000" })
    expect(await readRequestBody(request, 25)).toBeUndefined()
    expect(request.bodyUsed).toBe(false)
  })

  it("reads a body of unknown length only to one byte past the limit", async () => {
    const { stream, counter } = streamed(100)
    const body = await readRequestBody(postOf(stream), 25)
    expect(body?.byteLength).toBe(26)
    expect(counter.pulled).toBeLessThan(100)
  })

  it("streams a body whose length is not a plain decimal", async () => {
    const { stream } = streamed(3)
    const body = await readRequestBody(postOf(stream, { "content-length": "+30" }), 100)
    expect(body?.byteLength).toBe(30)
  })

  it("answers undefined for a request without a body", async () => {
    expect(await readRequestBody(new Request("http://gateway.test/"), 100)).toBeUndefined()
  })

  it("lets gateway.fetch refuse a declared oversized body with 413", async () => {
    const gateway = makeGateway({ bodyLimit: 25, loggers: [] })
    const request = new Request("http://gateway.test/functions/v1/signInWithOTP", {
      method: "POST",
      body: streamed(100).stream,
      headers: { "content-type": "application/json", "content-length": "1000" },
      duplex: "half"
    } as RequestInit)
    const response = await gateway.fetch(request)
    expect(response.status).toBe(413)
    expect(request.bodyUsed).toBe(false)
    await gateway.dispose()
  })

  it("lets gateway.fetch answer 413 at once when the declared body never comes", async () => {
    const gateway = makeGateway({ bodyLimit: 25, loggers: [] })
    // 2 bytes of the 99999999999 declared, then nothing: a reader that waits for the rest never answers.
    const stalled = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("{}"))
      }
    })
    const response = await gateway.fetch(
      new Request("http://gateway.test/functions/v1/signInWithOTP", {
        method: "POST",
        body: stalled,
        headers: { "content-type": "application/json", "content-length": "99999999999" },
        duplex: "half"
      } as RequestInit)
    )
    expect(response.status).toBe(413)
    expect(response.headers.get("connection")).toBe("close")
    expect(await response.json()).toMatchObject({ code: "payload_too_large" })
    await gateway.dispose()
  })
})

describe("a body declared larger than the limit", () => {
  it("is refused 413 on every path, bodyless methods too, closing the connection", async () => {
    const gateway = makeGateway({ bodyLimit: 25, loggers: [] })
    const declared = { "content-length": "99999999999" }
    for (const request of [
      { ...get("/functions/v1/.well-known/jwks.json"), headers: declared },
      { ...get("/no-such-path"), headers: declared },
      { method: "POST", path: "/functions/v1/signInWithOTP", query: new URLSearchParams(), headers: declared }
    ]) {
      const response = await gateway.handle(request)
      expect(response.status).toBe(413)
      expect(response.headers).toMatchObject({ connection: "close", "content-type": "application/problem+json" })
      expect(JSON.parse(response.body)).toMatchObject({ code: "payload_too_large" })
    }
    // A declared length within the limit is not refused for it.
    const within = await gateway.handle({
      ...get("/functions/v1/.well-known/jwks.json"),
      headers: { "content-length": "25" }
    })
    expect(within.status).toBe(200)
    expect(within.headers.connection).toBeUndefined()
    await gateway.dispose()
  })
})

describe("handleReadingBody", () => {
  /** A stream that records whether anyone read it. */
  const watched = (readableEnded: boolean, ...chunks: Array<string>) => {
    const read = { started: false }
    const source = {
      readableEnded,
      async *[Symbol.asyncIterator]() {
        read.started = true
        yield* chunks
      }
    }
    return { source, read }
  }
  const signIn = {
    method: "POST",
    path: "/functions/v1/signInWithOTP",
    query: new URLSearchParams(),
    headers: { "content-type": "application/json" }
  }

  it("reads a body the method carries, within the limit, and answers from it", async () => {
    const gateway = makeGateway({ loggers: [], bodyLimit: 10 })
    const { source, read } = watched(false, '{"phone":', '"+14155552671"}')
    const response = await handleReadingBody(gateway, signIn, source)
    expect(read.started).toBe(true)
    expect(JSON.parse(response.body)).toMatchObject({ code: "payload_too_large" })
    await gateway.dispose()
  })

  it("leaves the stream alone for a method without a body, or one the host already read", async () => {
    const gateway = makeGateway({ loggers: [] })
    const jwks = watched(false, "ignored")
    expect((await handleReadingBody(gateway, get("/functions/v1/.well-known/jwks.json"), jwks.source)).status).toBe(200)
    const drained = watched(true, "ignored")
    const refused = await handleReadingBody(gateway, signIn, drained.source)
    expect(JSON.parse(refused.body)).toMatchObject({ code: "body_required" })
    expect([jwks.read.started, drained.read.started]).toEqual([false, false])
    await gateway.dispose()
  })

  it("answers a body declared larger than the limit without reading any of it", async () => {
    const gateway = makeGateway({ loggers: [], bodyLimit: 10 })
    const { source, read } = watched(false, "{}")
    const response = await handleReadingBody(
      gateway,
      { ...signIn, headers: { ...signIn.headers, "content-length": "99999999999" } },
      source
    )
    expect(read.started).toBe(false)
    expect(response.status).toBe(413)
    expect(response.headers.connection).toBe("close")
    await gateway.dispose()
  })

  it("answers, never rejects, when the client goes away mid-body (no error reaches the host to log)", async () => {
    const gateway = makeGateway({ loggers: [] })
    const aborted = {
      readableEnded: false,
      async *[Symbol.asyncIterator]() {
        yield '{"phone":'
        throw Object.assign(new Error("aborted"), { code: "ECONNRESET" })
      }
    }
    const response = await handleReadingBody(gateway, signIn, aborted)
    expect(response.status).toBe(400)
    expect(response.headers.connection).toBe("close")
    expect(JSON.parse(response.body)).toMatchObject({ code: "body_incomplete" })
    await gateway.dispose()
  })

  it("takes zero bytes for no body", async () => {
    const gateway = makeGateway({ loggers: [] })
    const response = await handleReadingBody(gateway, signIn, watched(false).source)
    expect(JSON.parse(response.body)).toMatchObject({ code: "body_required" })
    await gateway.dispose()
  })
})

describe("singleValuedHeaders", () => {
  it("hands back the host's own object when no field is repeated", () => {
    const headers = { host: "example.com", "content-type": "application/json" }
    expect(singleValuedHeaders(headers)).toBe(headers)
  })

  it("joins repeated fields with a comma", () => {
    expect(singleValuedHeaders({ host: "example.com", "x-tag": ["a", "b"], gone: undefined })).toEqual({
      host: "example.com",
      "x-tag": "a, b"
    })
  })
})

describe("request logging", () => {
  const capture = () => {
    const lines: Array<{ message: unknown; level: string; annotations: Record<string, unknown> }> = []
    const logger = Logger.make((options) => {
      lines.push({
        message: options.message,
        level: options.logLevel,
        annotations: { ...options.fiber.getRef(References.CurrentLogAnnotations) }
      })
    })
    return { lines, logger }
  }

  it("logs one line per request with its id, status and path, and annotates the route's own lines", async () => {
    const { lines, logger } = capture()
    const gateway = makeGateway({
      ports: embeddedPorts({ otp: { testPhones: { "+14155550100": "123456" } } }),
      loggers: [logger]
    })
    await gateway.handle({ ...get("/v1/no-such-endpoint"), headers: { "x-request-id": "req-404" } })
    await gateway.handle({
      ...post("/functions/v1/signInWithOTP", { phone: "+14155550100" }),
      headers: { "content-type": "application/json", "x-request-id": "req-sign-in" }
    })
    const requests = lines.filter((line) => String(line.message).includes("walletgate: request"))
    expect(requests.map((line) => line.annotations)).toEqual([
      expect.objectContaining({ requestId: "req-404", status: 404, method: "GET", path: "/v1/no-such-endpoint" }),
      expect.objectContaining({ requestId: "req-sign-in", status: 200, method: "POST" })
    ])
    const sent = lines.find((line) => String(line.message).includes("sign-in code sent"))
    expect(sent?.annotations).toMatchObject({ requestId: "req-sign-in", phone: expect.stringMatching(/^\*+0100$/) })
    await gateway.dispose()
  })

  /** The embedded ports with an OTP store whose every call ends as `outcome` does. */
  const otpStoreThat = (outcome: Effect.Effect<never, StoreUnavailable>) =>
    Layer.mergeAll(
      embeddedPorts(),
      Layer.succeed(
        OtpStore,
        OtpStore.of({ issue: () => outcome, activate: () => outcome, withdraw: () => outcome, consume: () => outcome })
      )
    )

  it("answers a defect 500 with nothing of it in the body, and logs it as an error with the request id", async () => {
    const { lines, logger } = capture()
    const gateway = makeGateway({ ports: otpStoreThat(Effect.die(new Error("store exploded"))), loggers: [logger] })
    const response = await gateway.handle({
      ...post("/functions/v1/signInWithOTP", { phone: "+14155552671" }),
      headers: { "content-type": "application/json", "x-request-id": "req-defect" }
    })
    expect(response.status).toBe(500)
    expect(JSON.parse(response.body)).toMatchObject({ code: "internal_error" })
    expect(response.body).not.toMatch(/exploded|at |Error:/)
    expect(response.headers["x-request-id"]).toBe("req-defect")
    const logged = lines.find((line) => line.level === "Error")
    expect(String(logged?.message)).toMatch(/unexpected failure[\s\S]*store exploded/)
    expect(logged?.annotations).toMatchObject({ requestId: "req-defect" })
    await gateway.dispose()
  })

  it("answers an outage with its 5xx problem and logs it as a warning with the request id", async () => {
    const { lines, logger } = capture()
    const gateway = makeGateway({
      ports: otpStoreThat(Effect.fail(new StoreUnavailable({ operation: "otp.issue" }))),
      loggers: [logger]
    })
    const response = await gateway.handle({
      ...post("/functions/v1/signInWithOTP", { phone: "+14155552671" }),
      headers: { "content-type": "application/json", "x-request-id": "req-outage" }
    })
    expect(response.status).toBe(503)
    expect(JSON.parse(response.body)).toMatchObject({ code: "store_unavailable" })
    const warned = lines.find((line) => String(line.message).includes("walletgate: store_unavailable"))
    expect(warned?.level).toBe("Warn")
    expect(warned?.annotations).toMatchObject({ requestId: "req-outage" })
    expect(lines.filter((line) => line.level === "Error")).toEqual([])
    await gateway.dispose()
  })

  it("writes no request line below the minimum level, and still logs the warnings above it", async () => {
    const { lines, logger } = capture()
    const gateway = makeGateway({
      ports: Layer.mergeAll(embeddedPorts(), Layer.succeed(References.MinimumLogLevel, "Warn")),
      loggers: [logger]
    })
    await gateway.handle(get("/v1/no-such-endpoint"))
    expect(lines.filter((line) => String(line.message).includes("walletgate: request"))).toEqual([])
    await gateway.dispose()
  })
})
