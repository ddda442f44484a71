// The servers bench/http.ts compares. Each runs alone in a child process (bench/http/serve.ts) on 127.0.0.1
// and a free port, so that the load generator in the parent never shares its event loop.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { embeddedPorts, type Gateway, type GatewayRequest, makeGateway, SmsSender } from "@walletgate/core"
import {
  handleReadingBody,
  methodTakesBody,
  readBodyWithin,
  readRequestBody,
  singleValuedHeaders
} from "@walletgate/core/adapter"
import { walletgate as expressWalletgate } from "@walletgate/express"
import { walletgate as koaWalletgate } from "@walletgate/koa"
import * as Layer from "effect/Layer"
import express, { type Request as ExpressRequest, type Response as ExpressResponse } from "express"
import Koa from "koa"
import { BARE_BODY_LIMIT, type BareAnswer, type BareServer, bareServer } from "./bare.ts"
import { MISSING_PATH, type Reference, testPhones } from "./requests.ts"

/** Every server, by name. */
export const targetNames = [
  "walletgate Express",
  "bare Express",
  "bare Express + state",
  "walletgate Koa",
  "bare Koa",
  "bare Koa + state",
  "walletgate fetch (node:http bridge)",
  "walletgate handle (node:http)",
  "bare fetch (node:http bridge)",
  "bare fetch + state (node:http bridge)",
  "bare node:http",
  "bare node:http + state",
  "load ceiling (node:http, constant answer)"
] as const

/** The name of a server. */
export type TargetName = (typeof targetNames)[number]

/** walletgate and the bare apps it is compared with, on one framework. */
export interface Pair {
  readonly framework: string
  readonly walletgate: TargetName
  readonly bare: TargetName
  /** The bare app doing walletgate's in-memory state work of a sign-in too (bench/http/bare.ts). */
  readonly bareWithState: TargetName
  /**
   * Whether the goal is judged on this pair. Not where the two sides differ by more than walletgate: the same
   * `gateway.fetch` against bare node:http carries the Request/Response bridge, which the pair behind the same
   * bridge on both sides leaves out.
   */
  readonly judged: boolean
}

/** Every pair the benchmarks compare, one per framework (and `gateway.fetch` twice). */
export const pairs: ReadonlyArray<Pair> = [
  {
    framework: "Express 5",
    walletgate: "walletgate Express",
    bare: "bare Express",
    bareWithState: "bare Express + state",
    judged: true
  },
  {
    framework: "Koa 3",
    walletgate: "walletgate Koa",
    bare: "bare Koa",
    bareWithState: "bare Koa + state",
    judged: true
  },
  // gateway.fetch and a bare fetch handler behind the same node:http bridge: walletgate's own cost.
  {
    framework: "fetch (node:http bridge)",
    walletgate: "walletgate fetch (node:http bridge)",
    bare: "bare fetch (node:http bridge)",
    bareWithState: "bare fetch + state (node:http bridge)",
    judged: true
  },
  // The same gateway.fetch against a bare node:http handler: the bridge's Request/Response cost included.
  {
    framework: "node:http (fetch)",
    walletgate: "walletgate fetch (node:http bridge)",
    bare: "bare node:http",
    bareWithState: "bare node:http + state",
    judged: false
  },
  {
    framework: "node:http (handle)",
    walletgate: "walletgate handle (node:http)",
    bare: "bare node:http",
    bareWithState: "bare node:http + state",
    judged: true
  }
]

/** A listening server. */
export interface RunningTarget {
  readonly port: number
  readonly close: () => Promise<void>
}

/**
 * The gateway every walletgate server runs: the embedded defaults, the bench's test phones, no per-IP cap
 * (the load comes from one IP), a silent SMS outbox (never used: test phones get no SMS) and no log output.
 */
export const benchGateway = async (): Promise<Gateway> => {
  const gateway = makeGateway({
    ports: Layer.mergeAll(
      embeddedPorts({ otp: { testPhones: testPhones(), sendsPerIpPerHour: Number.MAX_SAFE_INTEGER } }),
      SmsSender.console(() => undefined)
    ),
    loggers: []
  })
  await gateway.ready()
  return gateway
}

const listen = (server: Server, disposeAlso: () => Promise<void> = async () => undefined): Promise<RunningTarget> =>
  new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resolve({
        port,
        close: async () => {
          server.closeAllConnections()
          await new Promise<void>((done) => server.close(() => done()))
          await disposeAlso()
        }
      })
    })
  })

/** A request's `x-request-id`, as the bare servers read it (Node joins a repeated one into one string). */
const offeredId = (headers: IncomingMessage["headers"]): string | undefined => {
  const value = headers["x-request-id"]
  return typeof value === "string" ? value : undefined
}

/** Writes an answer as walletgate's Express adapter does: status, headers one by one, `end`. */
const writeExpress = (res: ExpressResponse, answer: BareAnswer) => {
  res.status(answer.status)
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value)
  res.end(answer.body)
}

const bareExpress = (bare: BareServer): Server => {
  const app = express()
  app.post("/functions/v1/signInWithOTP", (req, res, next) => {
    bare
      .signIn(req.headers["content-type"], () => readBodyWithin(req, BARE_BODY_LIMIT), req.ip, offeredId(req.headers))
      .then((answer) => writeExpress(res, answer))
      .catch(next)
  })
  const answer = (req: ExpressRequest, res: ExpressResponse) =>
    writeExpress(res, bare.answer(req.method, req.path, offeredId(req.headers)))
  app.get("/functions/v1/.well-known/jwks.json", answer)
  app.use(answer)
  return createServer(app)
}

const bareKoa = (bare: BareServer): Server => {
  const app = new Koa()
  app.use(async (ctx) => {
    const answer = bare.isSignIn(ctx.method, ctx.path)
      ? await bare.signIn(
          ctx.get("content-type"),
          () => readBodyWithin(ctx.req, BARE_BODY_LIMIT),
          ctx.ip,
          offeredId(ctx.headers)
        )
      : bare.answer(ctx.method, ctx.path, offeredId(ctx.headers))
    ctx.status = answer.status
    for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value)
    ctx.body = answer.body
  })
  return createServer(app.callback())
}

const pathOf = (req: IncomingMessage) => {
  const url = req.url ?? "/"
  const queryAt = url.indexOf("?")
  return queryAt === -1 ? url : url.slice(0, queryAt)
}

const writeNode = (
  res: ServerResponse,
  answer: { status: number; headers: Readonly<Record<string, string | ReadonlyArray<string>>> }
) => {
  for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value)
  res.writeHead(answer.status)
}

const bareNode = (bare: BareServer): Server =>
  createServer((req, res) => {
    const method = req.method ?? "GET"
    const path = pathOf(req)
    const answered = bare.isSignIn(method, path)
      ? bare.signIn(
          req.headers["content-type"],
          () => readBodyWithin(req, BARE_BODY_LIMIT),
          req.socket.remoteAddress,
          offeredId(req.headers)
        )
      : Promise.resolve(bare.answer(method, path, offeredId(req.headers)))
    answered.then(
      (answer) => {
        writeNode(res, answer)
        res.end(answer.body)
      },
      () => res.destroy()
    )
  })

/**
 * The smallest bridge from `node:http` to a fetch handler (`gateway.fetch`, or the bare one below): the body
 * read into one buffer, the raw headers copied into `Headers`, the `Response`'s status, headers and bytes
 * written back.
 */
const fetchBridge = (handler: (request: Request) => Promise<Response>, bodyLimit: number): Server =>
  createServer((req, res) => {
    const toRequest = async () => {
      const method = req.method ?? "GET"
      const headers = new Headers()
      for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
        headers.append(req.rawHeaders[i] ?? "", req.rawHeaders[i + 1] ?? "")
      }
      // readBodyWithin makes a fresh Uint8Array, so its buffer is an ArrayBuffer, as `BodyInit` wants.
      const body = methodTakesBody(method)
        ? ((await readBodyWithin(req, bodyLimit)) as Uint8Array<ArrayBuffer>)
        : undefined
      return new Request(`http://${req.headers.host ?? "127.0.0.1"}${req.url ?? "/"}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body })
      })
    }
    toRequest()
      .then(handler)
      .then(async (response) => {
        writeNode(res, { status: response.status, headers: Object.fromEntries(response.headers) })
        res.end(Buffer.from(await response.arrayBuffer()))
      })
      .catch(() => res.destroy())
  })

/**
 * The bare logic as a hand-written fetch handler: `Request` in, `Response` out. Like `gateway.fetch`, it has
 * no client IP (a `Request` carries none), so the "+ state" variant keeps the per-phone counter only, as
 * walletgate does then.
 */
const bareFetch =
  (bare: BareServer) =>
  async (request: Request): Promise<Response> => {
    const { pathname } = new URL(request.url)
    const answer = bare.isSignIn(request.method, pathname)
      ? await bare.signIn(
          request.headers.get("content-type") ?? undefined,
          () => readRequestBody(request, BARE_BODY_LIMIT),
          undefined,
          request.headers.get("x-request-id") ?? undefined
        )
      : bare.answer(request.method, pathname, request.headers.get("x-request-id") ?? undefined)
    return new Response(answer.body, { status: answer.status, headers: answer.headers })
  }

/** `node:http` straight to `gateway.handle`, as an adapter for bare `node:http` would be written (as the Express one is). */
const handleBridge = (gateway: Gateway): Server =>
  createServer((req, res) => {
    const url = req.url ?? "/"
    const queryAt = url.indexOf("?")
    const request: GatewayRequest = {
      method: req.method ?? "GET",
      path: queryAt === -1 ? url : url.slice(0, queryAt),
      query: new URLSearchParams(queryAt === -1 ? "" : url.slice(queryAt + 1)),
      headers: singleValuedHeaders(req.headers),
      ...(req.socket.remoteAddress === undefined ? {} : { remoteAddress: req.socket.remoteAddress })
    }
    handleReadingBody(gateway, request, req).then(
      (response) => {
        writeNode(res, response)
        res.end(response.body)
      },
      () => res.destroy()
    )
  })

/**
 * What the load generator can drive on this machine: node:http draining the body and answering a constant
 * (with the status the request expects, so that it passes the same checks).
 */
const ceiling = (): Server =>
  createServer((req, res) => {
    req.resume()
    req.once("end", () => {
      res.writeHead(req.url === MISSING_PATH ? 404 : 200, { "content-type": "application/json" })
      res.end('{"ok":true}')
    })
  })

/** Starts the server `name` on 127.0.0.1 and a free port. */
export const startTarget = async (name: TargetName, reference: Reference): Promise<RunningTarget> => {
  const bare = (withState: boolean) => bareServer(reference, { withState })
  switch (name) {
    case "walletgate Express": {
      const gateway = await benchGateway()
      const app = express()
      app.use(expressWalletgate(gateway))
      return listen(createServer(app), gateway.dispose)
    }
    case "walletgate Koa": {
      const gateway = await benchGateway()
      const app = new Koa()
      app.use(koaWalletgate(gateway))
      return listen(createServer(app.callback()), gateway.dispose)
    }
    case "walletgate fetch (node:http bridge)": {
      const gateway = await benchGateway()
      return listen(fetchBridge(gateway.fetch, gateway.bodyLimit), gateway.dispose)
    }
    case "walletgate handle (node:http)": {
      const gateway = await benchGateway()
      return listen(handleBridge(gateway), gateway.dispose)
    }
    case "bare Express":
      return listen(bareExpress(bare(false)))
    case "bare Express + state":
      return listen(bareExpress(bare(true)))
    case "bare Koa":
      return listen(bareKoa(bare(false)))
    case "bare Koa + state":
      return listen(bareKoa(bare(true)))
    case "bare fetch (node:http bridge)":
      return listen(fetchBridge(bareFetch(bare(false)), BARE_BODY_LIMIT))
    case "bare fetch + state (node:http bridge)":
      return listen(fetchBridge(bareFetch(bare(true)), BARE_BODY_LIMIT))
    case "bare node:http":
      return listen(bareNode(bare(false)))
    case "bare node:http + state":
      return listen(bareNode(bare(true)))
    case "load ceiling (node:http, constant answer)":
      return listen(ceiling())
  }
}
