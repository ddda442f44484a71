import {
  type Gateway,
  type GatewayRequest,
  type GatewayResponse,
  type HostStream,
  handleReadingBody,
  singleValuedHeaders
} from "@walletgate/core"

/**
 * The part of a Koa 3 `Context` the middleware reads and writes. Declared here, structurally, so
 * that the published types do not depend on `@types/koa`; Koa's own context satisfies it.
 */
export interface KoaContext {
  readonly method: string
  /** The path, still percent-encoded; already below the mount point under `koa-mount`. */
  readonly path: string
  readonly querystring: string
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  /** The client IP: the socket's, or `X-Forwarded-For`'s when `app.proxy` is set. */
  readonly ip: string
  readonly req: HostStream
  /** Koa's request; a body parser of the host leaves `body` (and often `rawBody`) on it. */
  readonly request: object
  status: number
  body: unknown
  set(field: string, value: string): void
  remove(field: string): void
}

/** A Koa middleware over {@link KoaContext}; Koa's `app.use` accepts it. */
export type KoaMiddleware = (ctx: KoaContext, next: () => Promise<unknown>) => Promise<void>

/** Options of {@link walletgate}. */
export interface KoaOptions {
  /** Answer only below this path (`"/wallet"`), which is stripped as `koa-mount` would; others go to `next()`. */
  readonly prefix?: string
}

/**
 * Koa middleware that answers requests with `gateway`: every request, or those below `prefix`. It
 * uses a body the host already parsed, otherwise reads the body itself within the gateway's limit.
 * The client IP is `ctx.ip`, so `app.proxy` (and `app.maxIpsCount`) decide whether forwarded
 * headers count.
 */
export const walletgate = (gateway: Gateway, options: KoaOptions = {}): KoaMiddleware => {
  const prefix = mountPrefix(options.prefix)
  return async (ctx, next) => {
    const path = below(prefix, ctx.path)
    if (path === undefined) {
      await next()
      return
    }
    const request = toGatewayRequest(ctx, path)
    const parsed = hostBody(ctx.request)
    write(
      ctx,
      await (parsed === undefined
        ? handleReadingBody(gateway, request, ctx.req)
        : gateway.handle({ ...request, ...parsed }))
    )
  }
}

const mountPrefix = (prefix: string | undefined): string => {
  if (prefix === undefined) return ""
  if (!prefix.startsWith("/")) throw new TypeError(`walletgate: prefix must start with "/": ${prefix}`)
  return prefix.replace(/\/+$/, "")
}

/** The path below `prefix`, or `undefined` when `path` is outside it (`/wallet` does not hold `/walletx`). */
const below = (prefix: string, path: string): string | undefined => {
  if (prefix === "") return path
  if (path === prefix) return "/"
  return path.startsWith(`${prefix}/`) ? path.slice(prefix.length) : undefined
}

/** The request as the gateway sees it, before its body. */
const toGatewayRequest = (ctx: KoaContext, path: string): GatewayRequest => ({
  method: ctx.method,
  path,
  query: new URLSearchParams(ctx.querystring),
  headers: singleValuedHeaders(ctx.headers),
  ...(ctx.ip === "" ? {} : { remoteAddress: ctx.ip })
})

/**
 * The body a body parser of the host already took from the stream. Its raw text, when it kept one, is what
 * the client sent (a signature over the body still holds); else what it parsed.
 */
const hostBody = (request: object): Pick<GatewayRequest, "rawBody" | "body"> | undefined => {
  if ("rawBody" in request && typeof request.rawBody === "string") {
    const rawBody = new TextEncoder().encode(request.rawBody)
    return rawBody.byteLength === 0 ? {} : { rawBody }
  }
  if ("body" in request && request.body !== undefined) return { body: request.body }
  return undefined
}

const write = (ctx: KoaContext, response: GatewayResponse): void => {
  ctx.status = response.status
  for (const [name, value] of Object.entries(response.headers)) ctx.set(name, value)
  ctx.body = response.body
  // Koa gives a string body a text/plain type when none is set; the core's answer has the last word.
  if (response.headers["content-type"] === undefined) ctx.remove("content-type")
}
