import {
  type Gateway,
  type GatewayRequest,
  type GatewayResponse,
  type HostStream,
  handleReadingBody,
  pathBelow,
  singleValuedHeaders
} from "@walletgate/core/adapter"

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
  set(field: string, value: string | Array<string>): void
  remove(field: string): void
}

/** A Koa middleware over {@link KoaContext}; Koa's `app.use` accepts it. */
export type KoaMiddleware = (ctx: KoaContext, next: () => Promise<unknown>) => Promise<void>

/**
 * Koa middleware that answers requests with `gateway`: those below the gateway's `basePath`
 * (`makeGateway({ basePath: "/wallet" })`), the others go to `next()`; the gateway strips the prefix itself.
 * Under `koa-mount`, `ctx.path` is already below the mount. It uses a body the host already parsed, otherwise
 * reads the body itself within the gateway's limit. The client IP is `ctx.ip`, so `app.proxy` (and
 * `app.maxIpsCount`) decide whether forwarded headers count.
 */
export const walletgate = (gateway: Gateway): KoaMiddleware => {
  return async (ctx, next) => {
    if (pathBelow(gateway.basePath, ctx.path) === undefined) {
      await next()
      return
    }
    const request = toGatewayRequest(ctx)
    const parsed = hostBody(ctx.request)
    write(
      ctx,
      await (parsed === undefined
        ? handleReadingBody(gateway, request, ctx.req)
        : gateway.handle({ ...request, ...parsed }))
    )
  }
}

/** The request as the gateway sees it, before its body. */
const toGatewayRequest = (ctx: KoaContext): GatewayRequest => ({
  method: ctx.method,
  path: ctx.path,
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
  // A field of several values (`set-cookie`) is written once per value, never joined.
  for (const [name, value] of Object.entries(response.headers))
    ctx.set(name, typeof value === "string" ? value : [...value])
  ctx.body = response.body
  // Koa gives a string body a text/plain type when none is set; the core's answer has the last word.
  if (response.headers["content-type"] === undefined) ctx.remove("content-type")
}
