import type { RequestListener } from "node:http"
import Koa from "koa"

/** A Koa app's request listener: `middleware` in order (the host's, walletgate's). */
export const koaApp = (...middleware: ReadonlyArray<Koa.Middleware>): RequestListener => {
  const koa = new Koa()
  for (const each of middleware) koa.use(each)
  return koa.callback()
}

/**
 * A stand-in for a host's JSON body parser, leaving what koa-bodyparser and @koa/bodyparser leave: for a
 * JSON request it reads the body as UTF-8 text, keeps the text as `ctx.request.rawBody` when `keepRaw`,
 * and the parsed value as `ctx.request.body` when the text parses. Other media types are not read.
 */
export const hostJsonParser =
  ({ keepRaw }: { readonly keepRaw: boolean }): Koa.Middleware =>
  async (ctx, next) => {
    if (ctx.is("application/json") !== "application/json") return next()
    const chunks: Array<Buffer> = []
    for await (const chunk of ctx.req) chunks.push(chunk)
    const text = Buffer.concat(chunks).toString("utf8")
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      // Left unparsed: with its raw text kept, walletgate still answers it (400 invalid_json).
    }
    Object.assign(ctx.request, { body, ...(keepRaw ? { rawBody: text } : {}) })
    return next()
  }
