// Two gateways on one redis-server, each behind its own Express server: a change made through the operator API of
// one holds on the other at once (a revoked key, a rotated secret refused within a second), and both read one audit log.
import { embeddedPorts, makeGateway, type NetworkConfig } from "@walletgate/core"
import { RedisStores } from "@walletgate/redis"
import * as Layer from "effect/Layer"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually, type Served, serve } from "./http"
import { type RedisServer, startRedisServer } from "./redis-server"

const TOKEN = "fleet-operator-token-0123456789abcdef0123"
const ACCOUNT = "0x52908400098527886E0F7030069857D2E4169EE7"
const ORDER = "00000000-0000-4000-8000-000000000009"
/** A network whose node is never reached: the routes used here refuse or answer before any chain read. */
const unreachable: NetworkConfig = {
  slug: "anvil",
  chainId: 31337,
  rpcUrl: "http://127.0.0.1:9",
  testnet: true,
  contracts: { sweeper: "0x0000000000000000000000000000000000000004" }
}

let server: RedisServer
const instances: Array<Served> = []
beforeAll(async () => {
  server = await startRedisServer()
  for (let i = 0; i < 2; i++) {
    instances.push(
      await serve(
        makeGateway({
          ports: Layer.mergeAll(
            embeddedPorts({ networks: [unreachable] }),
            RedisStores.layer({ url: server.url, keyPrefix: "ops:" })
          ),
          operatorTokens: [{ id: `ops-${i}`, token: TOKEN }],
          loggers: []
        })
      )
    )
  }
})
afterAll(async () => {
  await Promise.all(instances.map((instance) => instance.close()))
  await server?.stop()
})

const operator = { authorization: `Bearer ${TOKEN}` }
const send = (instance: Served | undefined, method: string, path: string, body?: unknown) =>
  fetch(`${instance?.url}${path}`, {
    method,
    headers: { ...operator, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

describe("the operator API of a fleet on one Redis", () => {
  it("a key revoked and a secret rotated through one instance are refused by the other within a second", async () => {
    const [first, second] = instances
    const key = (await (
      await send(first, "POST", "/v1/operator/keys", { networks: ["anvil"], accounts: [ACCOUNT] })
    ).json()) as { id: string; key: string }
    const app = (await (
      await send(first, "POST", "/v1/operator/apps", { name: "Fleet app", providers: ["phone"] })
    ).json()) as { clientId: string; clientSecret: string }

    const payout = () => second?.get(`/v1/anvil/account/${ACCOUNT}/payout/${ORDER}`, { "x-api-key": key.key })
    const token = (secret: string) =>
      second?.post("/v1/auth", { grant_type: "client_credentials", client_id: app.clientId, client_secret: secret })
    // Known to the other instance at once: the key passes (the payout is unknown), the secret is granted a token.
    expect((await payout())?.status).toBe(404)
    expect((await token(app.clientSecret))?.status).toBe(200)

    expect((await send(first, "DELETE", `/v1/operator/keys/${key.id}`)).status).toBe(200)
    expect((await send(first, "POST", `/v1/operator/apps/${app.clientId}/rotate-secret`)).status).toBe(200)
    await eventually(
      "the revoked key refused by the other instance",
      async () => (await payout())?.status === 401,
      1000
    )
    await eventually(
      "the old secret refused by the other instance",
      async () => (await token(app.clientSecret))?.status === 401,
      1000
    )

    // One audit log: the other instance reads what the first one recorded, with the first one's token id.
    const audit = (await (await send(second, "GET", "/v1/operator/audit")).json()) as ReadonlyArray<{
      action: string
      actor: string
    }>
    expect(audit.map((entry) => entry.action)).toEqual(["app.rotate_secret", "key.revoke", "app.create", "key.create"])
    expect(new Set(audit.map((entry) => entry.actor.split("@")[0]))).toEqual(new Set(["api:ops-0"]))
  })
})
