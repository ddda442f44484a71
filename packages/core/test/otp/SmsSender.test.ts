import { createHmac } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { type PhoneE164, SmsSender } from "@walletgate/core"
import { Effect, Exit, type Layer } from "effect"
import { afterEach, describe, expect, it } from "vitest"

interface Received {
  readonly method: string | undefined
  readonly url: string | undefined
  readonly headers: IncomingMessage["headers"]
  readonly body: string
}

const servers: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((close) => close()))
})

/** A local HTTP server that records each request and answers with `reply`. */
const serve = async (reply: (request: Received, response: ServerResponse) => void) => {
  const received: Array<Received> = []
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const request = { method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString() }
      received.push(request)
      reply(request, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  servers.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  )
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received }
}

const send = (layer: Layer.Layer<SmsSender>, to = "+14155552671", body = "Your code is 123456") =>
  Effect.runPromiseExit(
    Effect.gen(function* () {
      const sender = yield* SmsSender
      yield* sender.send(to as PhoneE164, body)
    }).pipe(Effect.provide(layer))
  )

const failureCause = (exit: Exit.Exit<void, { readonly cause: string }>) =>
  Exit.isFailure(exit) ? exit.cause.reasons.flatMap((r) => (r._tag === "Fail" ? [r.error.cause] : []))[0] : undefined

describe("SmsSender.twilio", () => {
  // Checks the request as Twilio's Messages API would: path, Basic auth, form encoding, required fields.
  const twilioLike = (request: Received, response: ServerResponse) => {
    const expectedAuth = `Basic ${Buffer.from("AC123:secret-token").toString("base64")}`
    const form = new URLSearchParams(request.body)
    const valid =
      request.method === "POST" &&
      request.url === "/2010-04-01/Accounts/AC123/Messages.json" &&
      request.headers.authorization === expectedAuth &&
      request.headers["content-type"] === "application/x-www-form-urlencoded" &&
      form.get("To") !== null &&
      form.get("Body") !== null &&
      (form.get("From") !== null) !== (form.get("MessagingServiceSid") !== null)
    response.writeHead(valid ? 201 : 400, { "content-type": "application/json" })
    response.end(JSON.stringify(valid ? { sid: "SM1", status: "queued" } : { code: 21604, message: "bad request" }))
  }

  it("posts To, Body and From with Basic auth, as Twilio expects", async () => {
    const twilio = await serve(twilioLike)
    const exit = await send(
      SmsSender.twilio({ accountSid: "AC123", authToken: "secret-token", from: "+15005550006", apiBase: twilio.url })
    )
    expect(Exit.isSuccess(exit)).toBe(true)
    const form = new URLSearchParams(twilio.received[0]?.body)
    expect(Object.fromEntries(form)).toEqual({ To: "+14155552671", Body: "Your code is 123456", From: "+15005550006" })
  })

  it("uses MessagingServiceSid for an MG sender", async () => {
    const twilio = await serve(twilioLike)
    const exit = await send(
      SmsSender.twilio({
        accountSid: "AC123",
        authToken: "secret-token",
        from: "MG9752274e9e519418a7406176694466fa",
        apiBase: `${twilio.url}/`
      })
    )
    expect(Exit.isSuccess(exit)).toBe(true)
    const form = new URLSearchParams(twilio.received[0]?.body)
    expect(form.get("MessagingServiceSid")).toBe("MG9752274e9e519418a7406176694466fa")
    expect(form.get("From")).toBeNull()
  })

  it("fails with the status, never the message text, when Twilio refuses", async () => {
    const twilio = await serve(twilioLike)
    const exit = await send(
      SmsSender.twilio({ accountSid: "AC123", authToken: "wrong", from: "+15005550006", apiBase: twilio.url })
    )
    expect(failureCause(exit)).toBe("twilio answered HTTP 400")
  })

  it("fails promptly when Twilio does not answer", async () => {
    const silent = await serve(() => undefined)
    const started = Date.now()
    const exit = await send(
      SmsSender.twilio({
        accountSid: "AC123",
        authToken: "t",
        from: "+15005550006",
        apiBase: silent.url,
        timeout: "200 millis"
      })
    )
    expect(failureCause(exit)).toBe("twilio did not answer in time")
    expect(Date.now() - started).toBeLessThan(5000)
  })

  it("fails when Twilio is unreachable", async () => {
    const exit = await send(
      SmsSender.twilio({ accountSid: "AC123", authToken: "t", from: "+15005550006", apiBase: "http://127.0.0.1:9" })
    )
    expect(failureCause(exit)).toMatch(/^twilio unreachable/)
  })
})

describe("SmsSender.webhook", () => {
  it("posts JSON with an HMAC signature the receiver can check", async () => {
    const hook = await serve((_request, response) => {
      response.writeHead(204)
      response.end()
    })
    const exit = await send(SmsSender.webhook({ url: `${hook.url}/sms`, secret: "shh" }))
    expect(Exit.isSuccess(exit)).toBe(true)
    const request = hook.received[0]
    expect(request?.url).toBe("/sms")
    expect(JSON.parse(request?.body ?? "")).toEqual({ to: "+14155552671", body: "Your code is 123456" })
    const expected = createHmac("sha256", "shh")
      .update(request?.body ?? "")
      .digest("hex")
    expect(request?.headers["x-walletgate-signature"]).toBe(`sha256=${expected}`)
  })

  it("fails on a non-2xx answer", async () => {
    const hook = await serve((_request, response) => {
      response.writeHead(503)
      response.end()
    })
    expect(failureCause(await send(SmsSender.webhook({ url: hook.url })))).toBe("webhook answered HTTP 503")
  })
})

describe("SmsSender.console", () => {
  it("writes the message, with the number masked, to its sink", async () => {
    const lines: Array<string> = []
    await send(SmsSender.console((line) => lines.push(line)))
    expect(lines).toEqual(["[walletgate sms outbox] to ***2671: Your code is 123456"])
  })
})
