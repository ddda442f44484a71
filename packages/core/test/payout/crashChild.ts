// A gateway process for the crash and fleet tests (crash.test.ts, operations/fleet.test.ts): the built @walletgate/core
// and @walletgate/redis, state on the Redis of REDIS_URL, networks from PAYOUT_NETWORKS (JSON), the fleet's access
// token key from GATEWAY_SIGNING_KEY (PEM, Ed25519) when set, served over HTTP on 127.0.0.1 and a free port, which
// it prints as `listening <port>`. The crash test kills it with SIGKILL. For the CLI's fleet test: without
// PAYOUT_NETWORKS the networks of WALLETGATE_NETWORKS_FILE, as a gateway reads them; REDIS_PREFIX unset, the
// default key prefix (`walletgate:`); GATEWAY_LOGS=1, the gateway's logs on stdout and stderr (else none).
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { embeddedPorts, makeGateway, SigningKeys } from "@walletgate/core"
import { gatewayNetworksFromEnv } from "@walletgate/core/config"
import { RedisStores } from "@walletgate/redis"
import { Effect, Layer } from "effect"

const networks =
  process.env.PAYOUT_NETWORKS === undefined
    ? await Effect.runPromise(gatewayNetworksFromEnv)
    : JSON.parse(process.env.PAYOUT_NETWORKS)
const signingKey = process.env.GATEWAY_SIGNING_KEY
const gateway = makeGateway({
  ports: Layer.mergeAll(
    embeddedPorts({ masterSecret: process.env.PAYOUT_MASTER_SECRET ?? "", networks }),
    ...(signingKey === undefined
      ? []
      : [SigningKeys.fromPrivateKey({ issuer: "walletgate", algorithm: "EdDSA", privateKey: signingKey })]),
    RedisStores.layer({
      url: process.env.REDIS_URL ?? "",
      ...(process.env.REDIS_PREFIX === undefined ? {} : { keyPrefix: process.env.REDIS_PREFIX })
    })
  ),
  ...(process.env.GATEWAY_LOGS === "1" ? {} : { loggers: [] })
})

const server = createServer((request, response) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", async () => {
    const headers = new Headers()
    for (const [name, value] of Object.entries(request.headers)) if (typeof value === "string") headers.set(name, value)
    const answer = await gateway.fetch(
      new Request(`http://gateway.test${request.url ?? "/"}`, {
        method: request.method ?? "GET",
        headers,
        ...(chunks.length === 0 ? {} : { body: Buffer.concat(chunks) })
      })
    )
    response.writeHead(answer.status, Object.fromEntries(answer.headers))
    response.end(await answer.text())
  })
})
server.listen(0, "127.0.0.1", () => {
  console.log(`listening ${(server.address() as AddressInfo).port}`)
})
