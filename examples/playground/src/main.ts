// The walletgate playground: every endpoint on the embedded defaults, behind Express, on PORT (3000).
// Configuration comes from the environment (see the README); an invalid variable stops it at start.
import { embeddedPorts, hostFromEnv, makeGateway, portFromEnv, smsSenderFromEnv } from "@walletgate/core"
import { walletgate } from "@walletgate/express"
import { Effect, Layer } from "effect"
import express from "express"

const settings = await Effect.runPromise(
  Effect.gen(function* () {
    return { port: yield* portFromEnv, host: yield* hostFromEnv }
  })
).catch((error: unknown) => {
  console.error(`walletgate playground: invalid configuration: ${String(error)}`)
  process.exit(1)
})

const gateway = makeGateway({ ports: Layer.mergeAll(embeddedPorts(), smsSenderFromEnv) })
await gateway.ready().catch((error: unknown) => {
  console.error(`walletgate playground: invalid configuration: ${String(error)}`)
  process.exit(1)
})

const app = express()
app.use(walletgate(gateway))
const server = app.listen(settings.port, settings.host, () => {
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : settings.port
  const base = `http://${settings.host}:${port}`
  console.log(`walletgate playground listening on ${base}

Try phone sign-in (the code appears below as "[walletgate sms outbox]"):
  curl -s ${base}/functions/v1/signInWithOTP -H 'content-type: application/json' -d '{"phone":"+14155552671"}'
  curl -s ${base}/functions/v1/verifyOTP -H 'content-type: application/json' -d '{"phone":"+14155552671","token":"<code>"}'
`)
})

const stop = () => {
  server.close(() => {
    gateway.dispose().then(() => process.exit(0))
  })
}
process.on("SIGINT", stop)
process.on("SIGTERM", stop)
