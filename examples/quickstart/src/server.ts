import { makeGateway } from "@walletgate/core"
import { walletgate } from "@walletgate/express"
import express from "express"

const app = express() // your existing app, with its own routes and middleware
app.get("/health", (_req, res) => {
  res.json({ ok: true })
})

// Phone sign-in, wallet and payout endpoints under /wallet, on the embedded defaults.
app.use("/wallet", walletgate(makeGateway()))

const server = app.listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () =>
  console.log("listening", server.address())
)
