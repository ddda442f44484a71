// One server of bench/http.ts, in a child process of its own: `node bench/http/server.ts <framework> <side>`, where
// side is `walletgate` (the adapter over the embedded defaults), `bare` (the framework answering by hand, doing the
// same work) or `better-auth` (the peer, bench/betterAuth.ts, Express only). It prints `{"port":…}`; then it answers
// each line on its stdin with one JSON line: `cpu` with its CPU time so far (`{"user":…,"system":…}`, µs),
// `code <phone>` with the code it last sent the phone (`{"code":…}`), `prune` by emptying the peer's memory tables
// (`{}`). It stops when its stdin closes, so that it never outlives the benchmark.
//
// The bare side answers with the same status, headers and body bytes as walletgate: the answers of the requests that
// run no domain effect are taken from a walletgate gateway at start (only `x-request-id` varies). The sign-in does
// walletgate's work by hand, the cheap way: media type, body read within the same limit, strict UTF-8, JSON.parse,
// the phone looked up in the bench's test phones, an HMAC of phone and code kept with its resend time, and the
// hourly counters per phone and per IP in Maps (what the in-memory ports do); the verification compares the HMAC,
// consumes the code, creates the phone's user in a Map and signs an EdDSA JWT with node:crypto.
import { createHmac, generateKeyPairSync, randomBytes, randomUUID, sign } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { createInterface } from "node:readline"
import { embeddedPorts, type Gateway, type GatewayRequest, makeGateway, SmsSender } from "@walletgate/core"
import { handleReadingBody, readBodyWithin, singleValuedHeaders } from "@walletgate/core/adapter"
import { walletgate as expressWalletgate } from "@walletgate/express"
import { walletgate as koaWalletgate } from "@walletgate/koa"
import { toNodeHandler } from "better-auth/node"
import * as Layer from "effect/Layer"
import express from "express"
import Koa from "koa"
import { makeBetterAuth, type PeerTables } from "../betterAuth.ts"
import { type Answer, frameworks, requestKinds, SIGN_IN_PATH, TEST_CODE, testPhone, VERIFY_PATH } from "./requests.ts"

const [framework, side] = process.argv.slice(2)
if (
  !frameworks.some((name) => name === framework) ||
  (side !== "walletgate" && side !== "bare" && !(side === "better-auth" && framework === "Express 5"))
) {
  throw new Error(
    `usage: server.ts <${frameworks.join(" | ")}> <walletgate | bare> | server.ts "Express 5" better-auth`
  )
}
const phones = Number(process.env.TEST_PHONES ?? 100_000)
const testPhones: Record<string, string> = {}
for (let n = 0; n < phones; n++) testPhones[testPhone(n)] = TEST_CODE

const gateway: Gateway = makeGateway({
  ports: Layer.mergeAll(
    embeddedPorts({ otp: { testPhones, sendsPerIpPerHour: Number.MAX_SAFE_INTEGER } }),
    SmsSender.console(() => undefined)
  ),
  loggers: []
})
await gateway.ready()

/** What the bare side does for one request: the answer, from the method, path, headers and a way to read the body. */
type Bare = (
  method: string,
  path: string,
  header: (name: string) => string | undefined,
  readBody: () => Promise<Uint8Array | undefined>,
  clientIp: string | undefined
) => Promise<Answer>

const bare = async (): Promise<Bare> => {
  // The answers to requests that run no domain effect, as walletgate gives them.
  const fixed = new Map<string, Answer>()
  for (const kind of requestKinds.filter((each) => each.body === undefined)) {
    const response = await gateway.fetch(
      new Request(`http://127.0.0.1${kind.path}`, { method: kind.method, headers: kind.headers ?? {} })
    )
    const headers = Object.fromEntries([...response.headers].filter(([name]) => name !== "x-request-id"))
    fixed.set(`${kind.method} ${kind.path}`, { status: response.status, headers, body: await response.text() })
  }
  const secret = randomBytes(32)
  const signingKey = generateKeyPairSync("ed25519").privateKey
  const base64url = (json: unknown) => Buffer.from(JSON.stringify(json)).toString("base64url")
  const codes = new Map<string, { readonly codeHash: string; readonly resendAt: number }>()
  const users = new Map<string, string>()
  const hourly = new Map<string, { readonly hour: number; count: number }>()
  const admit = (key: string, limit: number, now: number) => {
    const hour = Math.floor(now / 3_600_000)
    const current = hourly.get(key)
    const window = current?.hour === hour ? current : { hour, count: 0 }
    hourly.set(key, window)
    window.count += 1
    return window.count <= limit
  }
  const utf8 = new TextDecoder("utf-8", { fatal: true })
  const json = (status: number, body: unknown): Answer => ({
    status,
    headers: { "cache-control": "no-store", "content-type": "application/json", "x-content-type-options": "nosniff" },
    body: JSON.stringify(body)
  })
  const hash = (phone: string, code: string) => createHmac("sha256", secret).update(`${phone}:${code}`).digest("hex")
  return async (method, path, header, readBody, clientIp) => {
    if (method !== "POST" || (path !== SIGN_IN_PATH && path !== VERIFY_PATH)) {
      const answer = fixed.get(`${method} ${path}`)
      if (answer === undefined) throw new Error(`bare ${framework}: no answer for ${method} ${path}`)
      return answer
    }
    if (header("content-type")?.split(";")[0]?.trim().toLowerCase() !== "application/json") return json(415, {})
    const bytes = await readBody()
    if (bytes === undefined || bytes.byteLength > gateway.bodyLimit) return json(413, {})
    const parsed: unknown = JSON.parse(utf8.decode(bytes))
    const field = (name: string) =>
      typeof parsed === "object" && parsed !== null && name in parsed
        ? (parsed as Record<string, unknown>)[name]
        : undefined
    const phone = field("phone")
    if (typeof phone !== "string" || phone.length > 32) return json(400, {})
    const compact = phone.replace(/[\s\-().]/g, "")
    const code = testPhones[compact]
    if (code === undefined) return json(400, {})
    const now = Date.now()
    if (path === VERIFY_PATH) {
      const token = field("token")
      if (typeof token !== "string" || !/^[0-9]{6}$/.test(token)) return json(400, {})
      if (codes.get(compact)?.codeHash !== hash(compact, token)) return json(400, {})
      codes.delete(compact)
      const id = users.get(compact) ?? randomUUID()
      users.set(compact, id)
      const iat = Math.floor(now / 1000)
      const signed = `${base64url({ alg: "EdDSA", kid: "bench", typ: "JWT" })}.${base64url({ iss: "http://127.0.0.1", aud: "authenticated", sub: id, phone: compact, iat, exp: iat + 3_600 })}`
      const accessToken = `${signed}.${sign(null, Buffer.from(signed), signingKey).toString("base64url")}`
      const user = { id, phone: compact }
      return json(200, {
        access_token: accessToken,
        token_type: "bearer",
        expires_in: 3_600,
        expires_at: iat + 3_600,
        user
      })
    }
    if ((codes.get(compact)?.resendAt ?? 0) > now) return json(429, {})
    if (!admit(`phone:${compact}`, 5, now) || (clientIp !== undefined && !admit(`ip:${clientIp}`, 1e9, now))) {
      return json(429, {})
    }
    codes.set(compact, { codeHash: hash(compact, code), resendAt: now + 60_000 })
    return json(200, { sent: true, expires_in: 300, resend_after: 60 })
  }
}

/** The request's own `x-request-id` when it is sane, else a fresh one (as walletgate). */
const requestId = (offered: string | undefined) =>
  offered !== undefined && /^[A-Za-z0-9._:-]{1,128}$/.test(offered) ? offered : randomUUID()

const pathOf = (url: string) => {
  const queryAt = url.indexOf("?")
  return queryAt === -1 ? url : url.slice(0, queryAt)
}

const write = (res: ServerResponse, answer: Answer, id: string | undefined) => {
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value)
  if (id !== undefined) res.setHeader("x-request-id", id)
  res.writeHead(answer.status)
  res.end(answer.body)
}

/** The peer's memory tables and the codes it sent, by phone. */
const peerTables: PeerTables = { user: [], session: [], account: [], verification: [] }
const peerCodes = new Map<string, string>()

const handler = async (): Promise<Parameters<typeof createServer>[1]> => {
  if (side === "better-auth") {
    const auth = makeBetterAuth(
      randomBytes(32).toString("hex"),
      (phone, code) => peerCodes.set(phone, code),
      peerTables
    )
    return express().all("/api/auth/*splat", toNodeHandler(auth))
  }
  if (side === "walletgate") {
    if (framework === "Express 5") return express().use(expressWalletgate(gateway))
    if (framework === "Koa 3") return new Koa().use(koaWalletgate(gateway)).callback()
    // node:http straight to `gateway.handle`, as an adapter for bare node:http would be written.
    return (req: IncomingMessage, res: ServerResponse) => {
      const url = req.url ?? "/"
      const request: GatewayRequest = {
        method: req.method ?? "GET",
        path: pathOf(url),
        query: new URLSearchParams(url.slice(pathOf(url).length + 1)),
        headers: singleValuedHeaders(req.headers),
        ...(req.socket.remoteAddress === undefined ? {} : { remoteAddress: req.socket.remoteAddress })
      }
      handleReadingBody(gateway, request, req).then(
        (response) => write(res, { ...response, headers: response.headers as Answer["headers"] }, undefined),
        () => res.destroy()
      )
    }
  }
  const answer = await bare()
  // Each framework's bare app answers the way walletgate's adapter for it writes an answer.
  const reply = (
    req: IncomingMessage,
    path: string,
    ip: string | undefined,
    send: (answer: Answer, id: string) => void,
    fail: (error: unknown) => void
  ) => {
    const header = (name: string) => {
      const value = req.headers[name]
      return typeof value === "string" ? value : undefined
    }
    return answer(req.method ?? "GET", path, header, () => readBodyWithin(req, gateway.bodyLimit), ip).then(
      (answered) => send(answered, requestId(header("x-request-id"))),
      fail
    )
  }
  if (framework === "Express 5") {
    const app = express()
    app.use((req, res, next) =>
      reply(
        req,
        req.path,
        req.ip,
        (answered, id) => {
          res.status(answered.status)
          for (const [name, value] of Object.entries(answered.headers)) res.setHeader(name, value)
          res.setHeader("x-request-id", id)
          res.end(answered.body)
        },
        next
      )
    )
    return app
  }
  if (framework === "Koa 3") {
    return new Koa()
      .use((ctx) =>
        reply(
          ctx.req,
          ctx.path,
          ctx.ip,
          (answered, id) => {
            ctx.status = answered.status
            for (const [name, value] of Object.entries(answered.headers)) ctx.set(name, value)
            ctx.set("x-request-id", id)
            ctx.body = answered.body
          },
          (error) => ctx.throw(500, String(error))
        )
      )
      .callback()
  }
  return (req: IncomingMessage, res: ServerResponse) =>
    reply(
      req,
      pathOf(req.url ?? "/"),
      req.socket.remoteAddress,
      (answered, id) => write(res, answered, id),
      () => res.destroy()
    )
}

const server = createServer(await handler())
server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  process.stdout.write(
    `${JSON.stringify({ port: typeof address === "object" && address !== null ? address.port : 0 })}\n`
  )
})
createInterface({ input: process.stdin }).on("line", (line) => {
  const [command, phone = ""] = line.split(" ")
  let answer: unknown = {}
  if (command === "cpu") answer = process.cpuUsage()
  if (command === "code") answer = { code: side === "better-auth" ? peerCodes.get(phone) : TEST_CODE }
  if (command === "prune") {
    for (const table of Object.values(peerTables)) table.length = 0
    peerCodes.clear()
  }
  process.stdout.write(`${JSON.stringify(answer)}\n`)
})
process.stdin.once("close", () => {
  server.closeAllConnections()
  server.close(() => gateway.dispose().finally(() => process.exit(0)))
})
