import { once } from "node:events"
import type Koa from "koa"

/** A Koa app listening on 127.0.0.1 and a free port. */
export interface Listening {
  readonly url: string
  /** Closes the server and every connection it still holds. */
  readonly close: () => Promise<void>
}

/** Starts `app` on 127.0.0.1 and a free port. */
export const listen = async (app: Koa): Promise<Listening> => {
  const server = app.listen(0, "127.0.0.1")
  await once(server, "listening")
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("expected a TCP address")
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: async () => {
      server.closeAllConnections()
      server.close()
      await once(server, "close")
    }
  }
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
