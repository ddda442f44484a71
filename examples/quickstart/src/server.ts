import { makeGateway } from "@walletgate/core"
import { walletgate } from "@walletgate/express"
import express from "express"

const app = express() // your existing app, with its own routes and middleware
app.get("/health", (_req, res) => res.json({ ok: true }))

// Phone sign-in, wallet and payout endpoints under /wallet, on the embedded defaults.
app.use("/wallet", walletgate(makeGateway()))

const port = Number(process.env.PORT ?? 3000)
const server = app.listen(port, "127.0.0.1", (error) => {
  if (error === undefined) return console.log("listening", server.address())
  console.error(`cannot listen on port ${port} (${error.message}); set PORT= to choose another`)
  process.exit(1)
})
