// The new user's path through this example's README, "The first deployment, step by step", as far as it runs here: the
// sample secret decoded and held against what template.yaml resolves and what src/settings.ts requires; the first app,
// automation account and API key made on a local redis-server by the README's CLI commands (`walletgate apps create`,
// `accounts register` and `keys create`); then `npm run invoke`'s script against that Redis, which must answer with
// the operator-made app and exit by itself; and the README's "Redis unreachable" story, invoked.
import { execFile } from "node:child_process"
import { generateKeyPairSync } from "node:crypto"
import { readFileSync } from "node:fs"
import { mkdtemp, writeFile } from "node:fs/promises"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runCli } from "../../../packages/core/test/cli/walletgate"
import { type RedisServer, startRedisServer } from "../../../packages/store-redis/test/redis-server"
import { buildHandlers } from "../scripts/build"
import { productionSettings } from "../src/settings"

const run = promisify(execFile)
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url))
const README = readFileSync(here("../README.md"), "utf8")
const TEMPLATE = readFileSync(here("../template.yaml"), "utf8")

/** The README's sample secret: the JSON block of step 2. */
const sampleSecret = (): Record<string, string> => {
  const step = README.slice(README.indexOf("**The secret.**"))
  const block = /```json\n([\s\S]*?)```/.exec(step)?.[1]
  if (block === undefined) throw new Error("no sample secret in the README")
  return JSON.parse(block) as Record<string, string>
}

/** The keys of the secret that template.yaml resolves into the function's environment. */
const resolvedKeys = [...TEMPLATE.matchAll(/resolve:secretsmanager:\$\{SecretName\}:SecretString:(\w+)\}\}/g)].map(
  (match) => match[1]
)

const MASTER_SECRET = "first-deployment-test-master-secret-0123456789"
const SIGNING_KEY = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString()
const PAYMASTER_KEY = `0x${"11".repeat(32)}` as const
/** A network as the template's `Networks` parameter gives one: its paymaster's signer key from the secret. */
const NETWORKS = JSON.stringify({
  networks: {
    anvil: {
      chainId: 31337,
      testnet: true,
      rpcUrls: ["http://127.0.0.1:9"],
      bundlerUrl: "http://127.0.0.1:9",
      paymaster: { address: privateKeyToAccount(PAYMASTER_KEY).address, signerKey: { env: "PAYMASTER_SIGNER_KEY" } }
    }
  }
})

/** The function's environment: the secret's keys with working values, and the template's other variables. */
const functionEnv = (redisUrl: string): Record<string, string> => ({
  REDIS_URL: redisUrl,
  WALLETGATE_MASTER_SECRET: MASTER_SECRET,
  WALLETGATE_SIGNING_KEY: SIGNING_KEY,
  PAYMASTER_SIGNER_KEY: PAYMASTER_KEY,
  TWILIO_AUTH_TOKEN: "twilio-test-token",
  WALLETGATE_ISSUER: "walletgate",
  WALLETGATE_NETWORKS: NETWORKS,
  WALLETGATE_SMS: "console"
})

/** `src/settings.ts` read from `env`: undefined when it starts, else the error's message. */
const settingsError = async (env: Record<string, string>): Promise<string | undefined> => {
  const exit = await Effect.runPromiseExit(
    productionSettings().pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env }))))
  )
  return Exit.isSuccess(exit) ? undefined : String(exit.cause)
}

/** A port nothing listens on. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

/** `npm run invoke`'s script with `event`: it must exit by itself; its last line is the handler's result. */
const invoke = async (env: Record<string, string>, event: unknown) => {
  const file = join(await mkdtemp(join(tmpdir(), "walletgate-invoke-")), "event.json")
  await writeFile(file, JSON.stringify(event))
  const { stdout } = await run(process.execPath, [here("../scripts/invoke.ts"), file], {
    env: { PATH: process.env.PATH ?? "", ...env },
    timeout: 30_000
  })
  const result = JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as { statusCode: number; body: string }
  return { status: result.statusCode, body: JSON.parse(result.body) as Record<string, unknown> }
}

const signInEvent = JSON.parse(readFileSync(here("../events/sign-in.json"), "utf8")) as Record<string, unknown> & {
  requestContext: { http: Record<string, unknown> }
}
/** The sample event, sent to `path` with `body`. */
const eventTo = (path: string, body: unknown) => ({
  ...signInEvent,
  routeKey: "ANY /{proxy+}",
  rawPath: path,
  requestContext: {
    ...signInEvent.requestContext,
    routeKey: "ANY /{proxy+}",
    http: { ...signInEvent.requestContext.http, path }
  },
  pathParameters: { proxy: path.slice(1) },
  body: JSON.stringify(body)
})

describe("the Lambda README's first deployment, as a new user runs it", () => {
  let redis: RedisServer

  beforeAll(async () => {
    redis = await startRedisServer()
    await buildHandlers()
  }, 120_000)
  afterAll(() => redis?.stop())

  it("has a sample secret with exactly the keys template.yaml resolves", () => {
    expect(resolvedKeys.length).toBeGreaterThan(0)
    expect(Object.keys(sampleSecret()).sort()).toEqual([...new Set(resolvedKeys)].sort())
  })

  it("holds every secret src/settings.ts requires: with the sample's keys it starts, without any it names the key", async () => {
    const env = functionEnv(redis.url)
    expect(await settingsError(env)).toBeUndefined()
    for (const key of Object.keys(sampleSecret())) {
      const { [key]: _dropped, ...without } = env
      const error = await settingsError(without)
      // TWILIO_AUTH_TOKEN is read by the SMS sender's layer (with WALLETGATE_SMS=twilio), after the settings.
      if (key === "TWILIO_AUTH_TOKEN") expect(error).toBeUndefined()
      else expect(error).toContain(key)
    }
  })

  it("makes the first app, account and key on Redis with the README's CLI commands; the invoked function serves them, answers and exits", async () => {
    const env = functionEnv(redis.url)
    // Step 4 of the README, as an operator runs it: the CLI on the function's REDIS_URL, with its networks and master
    // secret (the built bin of @walletgate/core, loading @walletgate/redis at run time).
    const cli = async (...args: ReadonlyArray<string>) => {
      const answer = await runCli(
        {
          REDIS_URL: redis.url,
          WALLETGATE_NETWORKS: NETWORKS,
          PAYMASTER_SIGNER_KEY: PAYMASTER_KEY,
          WALLETGATE_MASTER_SECRET: MASTER_SECRET
        },
        args
      )
      expect(answer.stderr).toBe("")
      expect(answer.status).toBe(0)
      return JSON.parse(answer.stdout) as Record<string, string>
    }
    const app = await cli("apps", "create", "--name", "My shop", "--providers", "phone", "--json")
    const account = await cli("accounts", "register", "--network", "anvil", "--key", "treasury", "--json")
    const key = await cli("keys", "create", "--network", "anvil", "--account", String(account.address), "--json")
    expect(key.key).toMatch(/^wg_live_/)
    for (const command of ["apps create", "accounts register", "keys create"]) {
      expect(README).toContain(`npx walletgate ${command} `)
    }

    const sent = await invoke(env, signInEvent)
    expect(sent).toEqual({ status: 200, body: expect.objectContaining({ sent: true }) })
    const granted = await invoke(env, eventTo("/v1/auth", { client_id: app.clientId, client_secret: app.clientSecret }))
    expect(granted.status).toBe(200)
    expect(granted.body.token_type).toBe("bearer")
    const refused = await invoke(env, eventTo("/v1/auth", { client_id: app.clientId, client_secret: "wgs_wrong" }))
    expect(refused.status).toBe(401)
  }, 120_000)

  it("with Redis unreachable, completes the init and answers 503 store_unavailable, as the README tells", async () => {
    const env = functionEnv(`redis://127.0.0.1:${await closedPort()}`)
    const answer = await invoke(env, signInEvent)
    expect(answer.status).toBe(503)
    expect(answer.body.code).toBe("store_unavailable")
    expect(README).toContain("answers **503 `store_unavailable`** at once")
  }, 60_000)
})
