// An existing Express app (its own routes, its own API-key auth on /admin, its own express.json()) with
// walletgate's phone sign-in mounted under /wallet. Listens on PORT (3000; 0 picks a free port).
import { createHash, timingSafeEqual } from "node:crypto"
import { embeddedPorts, makeGateway } from "@walletgate/core"
import { otlpTelemetryFromEnv } from "@walletgate/core/telemetry"
import { walletgate } from "@walletgate/express"
import express, { type ErrorRequestHandler, type RequestHandler } from "express"

const adminKey = process.env.ADMIN_API_KEY ?? "dev-admin-key"

/** The host's own auth for its admin routes: the `x-api-key` header, compared in constant time. */
const requireApiKey: RequestHandler = (req, res, next) => {
  const digest = (value: string) => createHash("sha256").update(value).digest()
  if (timingSafeEqual(digest(req.get("x-api-key") ?? ""), digest(adminKey))) return next()
  res.status(401).json({ error: "missing or wrong x-api-key" })
}

const gateway = makeGateway({
  // Development only: +15005550006 always takes the code 123456 and gets no SMS. Never in production.
  ports: embeddedPorts({ otp: { testPhones: { "+15005550006": "123456" } } }),
  // Spans, metrics and logs over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT (or a per-signal one) is set; off otherwise.
  telemetry: otlpTelemetryFromEnv
})

const notes: Array<string> = []
const app = express()
// walletgate first, before the host's body parser: it reads its own bodies, so malformed JSON on its routes
// gets its problem+json answer (400 invalid_json) rather than Express's HTML error page. Mounted after
// express.json() it would take the body that parser made, but a body the parser refuses never reaches it.
// Outside /admin, so the host's API key does not apply: wallet users sign in with a code instead.
app.use("/wallet", walletgate(gateway))
app.use(express.json()) // the host's body parser, for its own routes

app.get("/health", (_req, res) => {
  res.json({ ok: true })
})
app.post("/notes", (req, res) => {
  const text: unknown = req.body?.text
  if (typeof text !== "string") {
    res.status(400).json({ error: "text must be a string" })
    return
  }
  notes.push(text)
  res.status(201).json({ id: notes.length, text })
})
app.use("/admin", requireApiKey)
app.get("/admin/notes", (_req, res) => {
  res.json({ notes })
})

/** The host's last error handler: a short JSON answer, and nothing of the request (its body) in the log. */
const answerErrors: ErrorRequestHandler = (error: { status?: unknown }, _req, res, _next) => {
  const status = typeof error.status === "number" && error.status >= 400 && error.status < 500 ? error.status : 500
  if (status === 500) console.error("host route failed")
  res.status(status).json({ error: status === 500 ? "internal error" : "bad request" })
}
app.use(answerErrors)

const port = Number(process.env.PORT ?? 3000)
const server = app.listen(port, "127.0.0.1", (error) => {
  if (error !== undefined) {
    console.error(`cannot listen on port ${port} (${error.message}); set PORT= to choose another`)
    process.exit(1)
  }
  const address = server.address()
  console.log(`listening on http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : ""}`)
})

const stop = () => {
  server.close(() => {
    gateway.dispose().then(() => process.exit(0))
  })
}
process.on("SIGINT", stop)
process.on("SIGTERM", stop)
