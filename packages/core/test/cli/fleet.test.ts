// The CLI manages a fleet's store: two gateway processes (the built packages, each its own Redis connection) on one
// redis-server, and the CLI as a process on the same Redis. What the CLI makes, both gateways honour; what it rotates
// or revokes, both refuse within a second; neither gateway's log shows a secret.
import type { ChildProcess } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "../../../store-redis/test/http"
import { type RedisServer, startRedisServer } from "../../../store-redis/test/redis-server"
import { type GatewayProcess, startGatewayProcess } from "../payout/gatewayProcess"
import { operatorSession, writeNetworksFile } from "./walletgate"

const PREFIX = "cli-fleet:"
const MASTER_SECRET = "cli-fleet-master-secret-of-32-characters-or-more"
const ACCOUNT = "0x000000000000000000000000000000000000dEaD"

const folder = mkdtempSync(join(tmpdir(), "walletgate-cli-fleet-"))
const processes: Array<ChildProcess> = []
let redis: RedisServer
let gateways: ReadonlyArray<GatewayProcess> = []
let operator: ReturnType<typeof operatorSession>

beforeAll(async () => {
  redis = await startRedisServer()
  const networksFile = writeNetworksFile(folder)
  operator = operatorSession({
    REDIS_URL: redis.url,
    WALLETGATE_REDIS_KEY_PREFIX: PREFIX,
    WALLETGATE_NETWORKS_FILE: networksFile,
    WALLETGATE_MASTER_SECRET: MASTER_SECRET
  })
  const env = {
    REDIS_URL: redis.url,
    REDIS_PREFIX: PREFIX,
    PAYOUT_MASTER_SECRET: MASTER_SECRET,
    WALLETGATE_NETWORKS_FILE: networksFile,
    GATEWAY_LOGS: "1"
  }
  gateways = await Promise.all([startGatewayProcess(env, processes), startGatewayProcess(env, processes)])
})
afterAll(async () => {
  for (const one of processes) one.kill("SIGKILL")
  await redis?.stop()
  rmSync(folder, { recursive: true, force: true })
})

/** The status of `POST /v1/auth` (client credentials) on a gateway. */
const grant = async (gateway: GatewayProcess, clientId: string, clientSecret: string) =>
  (
    await fetch(`${gateway.base}/v1/auth`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: clientId, client_secret: clientSecret })
    })
  ).status

/** The status and problem code of a payout request with an API key on a gateway. */
const pay = async (gateway: GatewayProcess, key: string) => {
  const answer = await fetch(`${gateway.base}/v1/anvil/account/${ACCOUNT}/payout/disperse`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: "{}"
  })
  const body = (await answer.json()) as { code?: string }
  return { status: answer.status, code: body.code }
}

/** Waits until every gateway answers as `refused` says; fails after a second. */
const refusedByBoth = (what: string, refused: (gateway: GatewayProcess) => Promise<boolean>) =>
  eventually(what, async () => (await Promise.all(gateways.map(refused))).every(Boolean), 1000)

describe("the CLI and two gateway processes on one Redis", () => {
  it("an app made by the CLI gets a token from both; after rotate-secret both refuse the old secret within a second", {
    timeout: 60_000
  }, async () => {
    const app = await operator.json<{ clientId: string; clientSecret: string }>(
      "apps",
      "create",
      "--name",
      "Fleet app",
      "--providers",
      "phone"
    )
    operator.shown(app.clientSecret)
    for (const gateway of gateways) expect(await grant(gateway, app.clientId, app.clientSecret)).toBe(200)

    const rotated = await operator.json<{ clientSecret: string }>("apps", "rotate-secret", app.clientId)
    operator.shown(rotated.clientSecret)
    await refusedByBoth("the old secret refused", async (gateway) => {
      return (await grant(gateway, app.clientId, app.clientSecret)) === 401
    })
    for (const gateway of gateways) expect(await grant(gateway, app.clientId, rotated.clientSecret)).toBe(200)

    await operator.json("apps", "revoke", app.clientId)
    await refusedByBoth("the revoked app refused", async (gateway) => {
      return (await grant(gateway, app.clientId, rotated.clientSecret)) === 401
    })
  })

  it("a key made by the CLI is accepted by both; after keys revoke both refuse it (401) within a second", {
    timeout: 60_000
  }, async () => {
    const made = await operator.json<{ id: string; key: string }>(
      "keys",
      "create",
      "--network",
      "anvil",
      "--account",
      ACCOUNT,
      "--mode",
      "test"
    )
    operator.shown(made.key)
    for (const gateway of gateways) {
      // The key is accepted: what answers is the account (no automation account there), never the key.
      expect(await pay(gateway, made.key)).toEqual({ status: 404, code: "account_not_found" })
    }
    const stranger = await pay(gateways[0] as GatewayProcess, `${made.key.slice(0, -4)}AAAA`)
    expect(stranger).toEqual({ status: 401, code: "invalid_api_key" })

    await operator.json("keys", "revoke", made.id)
    await refusedByBoth("the revoked key refused", async (gateway) => {
      return (await pay(gateway, made.key)).status === 401
    })
  })

  it("neither gateway's log shows a secret the CLI made", () => {
    expect(operator.secrets()).toHaveLength(3)
    for (const gateway of gateways) {
      // The gateways logged the requests and refusals above.
      expect(gateway.output()).toContain("walletgate: request")
      for (const secret of operator.secrets()) expect(gateway.output()).not.toContain(secret)
    }
  })
})
