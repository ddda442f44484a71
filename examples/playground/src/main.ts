// The walletgate playground: every endpoint on the embedded defaults, behind Express, on PORT (3000), with
// a local anvil chain that has walletgate's contracts deployed. Configuration comes from the environment
// (see the README); an invalid variable stops it at start.
import { randomBytes } from "node:crypto"
import {
  embeddedPorts,
  hashClientSecret,
  hostFromEnv,
  makeGateway,
  masterSecretFromEnv,
  portFromEnv,
  smsSenderFromEnv,
  startLocalNetwork
} from "@walletgate/core"
import { walletgate } from "@walletgate/express"
import { Effect, Layer } from "effect"
import express from "express"

// A development secret, public by being in this file: wallets made with it are only for the local chain.
const DEV_MASTER_SECRET = "walletgate-playground-development-master-secret"

const fail = (error: unknown): never => {
  console.error(`walletgate playground: invalid configuration: ${String(error)}`)
  process.exit(1)
}

const settings = await Effect.runPromise(
  Effect.gen(function* () {
    return {
      port: yield* portFromEnv,
      host: yield* hostFromEnv,
      masterSecret: yield* masterSecretFromEnv(DEV_MASTER_SECRET)
    }
  })
).catch(fail)

const chain = await startLocalNetwork()
const demoApp = {
  clientId: `wgc_${randomBytes(8).toString("hex")}`,
  clientSecret: `wgs_${randomBytes(24).toString("base64url")}`
}
const gateway = makeGateway({
  ports: Layer.mergeAll(
    embeddedPorts({
      networks: [chain.network],
      masterSecret: settings.masterSecret,
      apps: [
        {
          clientId: demoApp.clientId,
          secretHash: hashClientSecret(demoApp.clientSecret),
          providers: { phone: { kind: "phone" } },
          testMode: true
        }
      ]
    }),
    smsSenderFromEnv
  )
})
await gateway.ready().catch(async (error: unknown) => {
  await chain.stop()
  fail(error)
})

const app = express()
app.use(walletgate(gateway))
const server = app.listen(settings.port, settings.host, () => {
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : settings.port
  const base = `http://${settings.host}:${port}`
  console.log(`walletgate playground listening on ${base}
local chain (anvil, chain id ${chain.network.chainId}, network "${chain.network.slug}") at ${chain.anvil.rpcUrl}
demo app: client_id ${demoApp.clientId} client_secret ${demoApp.clientSecret} (test mode, provider "phone")

Try it (the code appears below as "[walletgate sms outbox]"; the README walks through every step):
  curl -s ${base}/functions/v1/signInWithOTP -H 'content-type: application/json' -d '{"phone":"+14155552671"}'
  curl -s ${base}/functions/v1/verifyOTP -H 'content-type: application/json' -d '{"phone":"+14155552671","token":"<code>"}'
  curl -s ${base}/v1/auth -H 'content-type: application/json' -d '{"client_id":"${demoApp.clientId}","client_secret":"${demoApp.clientSecret}"}'
`)
})

const stop = () => {
  server.close(() => {
    Promise.all([gateway.dispose(), chain.stop()]).then(() => process.exit(0))
  })
}
process.on("SIGINT", stop)
process.on("SIGTERM", stop)
