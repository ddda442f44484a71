// An existing Koa app (its own router, its own API-key auth on /admin, its own @koa/bodyparser) with
// walletgate's phone sign-in mounted under /wallet. Listens on PORT (3000; 0 picks a free port).
import { createHash, timingSafeEqual } from "node:crypto"
import { bodyParser } from "@koa/bodyparser"
import Router from "@koa/router"
import { embeddedPorts, makeGateway } from "@walletgate/core"
import { otlpTelemetryFromEnv } from "@walletgate/core/telemetry"
import { walletgate } from "@walletgate/koa"
import Koa from "koa"

const adminKey = process.env.ADMIN_API_KEY ?? "dev-admin-key"

/** The host's own auth for its admin routes: the `x-api-key` header, compared in constant time. */
const requireApiKey: Koa.Middleware = async (ctx, next) => {
  const digest = (value: string) => createHash("sha256").update(value).digest()
  if (timingSafeEqual(digest(ctx.get("x-api-key")), digest(adminKey))) return next()
  ctx.status = 401
  ctx.body = { error: "missing or wrong x-api-key" }
}

const gateway = makeGateway({
  // The gateway answers below /wallet and strips the prefix itself; the middleware calls next() for the rest.
  basePath: "/wallet",
  // Development only: +15005550006 always takes the code 123456 and gets no SMS. Never in production.
  ports: embeddedPorts({ otp: { testPhones: { "+15005550006": "123456" } } }),
  // Spans, metrics and logs over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT (or a per-signal one) is set; off otherwise.
  telemetry: otlpTelemetryFromEnv
})

const notes: Array<string> = []
const routes = new Router()
routes.get("/health", (ctx) => {
  ctx.body = { ok: true }
})
routes.post("/notes", (ctx) => {
  const { text } = (ctx.request.body ?? {}) as { text?: unknown }
  if (typeof text !== "string") {
    ctx.status = 400
    ctx.body = { error: "text must be a string" }
    return
  }
  notes.push(text)
  ctx.status = 201
  ctx.body = { id: notes.length, text }
})
const admin = new Router({ prefix: "/admin" })
admin.use(requireApiKey)
admin.get("/notes", (ctx) => {
  ctx.body = { notes }
})

const app = new Koa()
// walletgate first, before the host's body parser: it reads its own bodies, so malformed JSON under /wallet
// gets its problem+json answer. Not under /admin, so the host's API key does not apply: wallet users sign in
// with a code instead. Other paths pass through to the host.
app.use(walletgate(gateway))
app.use(bodyParser()) // the host's body parser, for its own routes
app.use(routes.routes())
app.use(admin.routes())

const port = Number(process.env.PORT ?? 3000)
const server = app.listen(port, "127.0.0.1", () => {
  const address = server.address()
  console.log(`listening on http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : ""}`)
})
server.once("error", (error) => {
  console.error(`cannot listen on port ${port} (${error.message}); set PORT= to choose another`)
  process.exit(1)
})

const stop = () => {
  server.close(() => {
    gateway.dispose().then(() => process.exit(0))
  })
}
process.on("SIGINT", stop)
process.on("SIGTERM", stop)
