import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { embeddedPorts, makeGateway, SpendPolicy } from "@walletgate/core"
import { Operator } from "@walletgate/core/operator"
import { RedisStores } from "@walletgate/redis"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { zeroAddress } from "viem"
import { afterAll, describe, expect, it } from "vitest"
import { startRedisServer } from "../../../packages/store-redis/test/redis-server"

const main = fileURLToPath(new URL("../src/main.ts", import.meta.url))
const children: Array<ChildProcess> = []
afterAll(() => {
  for (const child of children) child.kill("SIGKILL")
})

/** Starts the playground as `npm start` does (after the build), with `env` on top of a clean environment. */
const start = (env: Record<string, string>) => {
  const child = spawn(process.execPath, [main], {
    env: { PATH: process.env.PATH ?? "", PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.push(child)
  let output = ""
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString()
  })
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString()
  })
  const waitFor = async (pattern: RegExp, ms = 15_000) => {
    const until = Date.now() + ms
    while (Date.now() < until) {
      const match = output.match(pattern)
      if (match !== null) return match
      if (child.exitCode !== null) break
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    throw new Error(`no ${pattern} in:\n${output}`)
  }
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  return { child, waitFor, exited, output: () => output }
}

describe("the playground (npm start)", () => {
  it("walks through the README: phone sign-in, an access token, and a kernel tx moving test ETH", async () => {
    const playground = start({})
    const [, base] = (await playground.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/, 90_000)) as RegExpMatchArray
    const [, rpcUrl] = (await playground.waitFor(/at (http:\/\/127\.0\.0\.1:\d+)/)) as RegExpMatchArray
    // The banner shows the bundler, and it answers for the EntryPoint it names.
    const [, entryPoint, bundlerUrl] = (await playground.waitFor(
      /bundler \(alto, ERC-4337 EntryPoint v0\.7 (0x[0-9a-fA-F]{40})\) at (http:\/\/127\.0\.0\.1:\d+)/
    )) as RegExpMatchArray
    const supported = await fetch(bundlerUrl as string, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_supportedEntryPoints", params: [] })
    })
    expect(((await supported.json()) as { result: Array<string> }).result).toEqual([entryPoint])
    // The banner's console address: the page, and the token in its fragment opens the operator API.
    const [, consolePage, consoleToken] = (await playground.waitFor(
      /operator console (http:\/\/\S+\/operator)#token=(\S+)/
    )) as RegExpMatchArray
    const page = await fetch(consolePage as string)
    expect([page.status, page.headers.get("content-type")]).toEqual([200, "text/html; charset=utf-8"])
    const apps = await fetch(`${base}/v1/operator/apps`, { headers: { authorization: `Bearer ${consoleToken}` } })
    expect(apps.status).toBe(200)
    const [, clientId, clientSecret] = (await playground.waitFor(
      /client_id (\S+) client_secret (\S+)/
    )) as RegExpMatchArray
    const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
      const response = await fetch(`${base}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body)
      })
      return { status: response.status, body: (await response.json()) as Record<string, unknown> }
    }
    const rpc = async (method: string, params: Array<unknown>) => {
      const response = await fetch(rpcUrl as string, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params })
      })
      return ((await response.json()) as { result: unknown }).result
    }

    expect((await post("/functions/v1/signInWithOTP", { phone: "+14155552671" })).status).toBe(200)
    const [, code] = (await playground.waitFor(
      /\[walletgate sms outbox\] to \*\*\*2671: .*?(\d{6})/
    )) as RegExpMatchArray
    const verified = await post("/functions/v1/verifyOTP", { phone: "+14155552671", token: code })
    expect(verified.status).toBe(200)
    const jwt = String(verified.body.access_token)
    const userId = `phone:${(verified.body.user as { id: string }).id}`

    const granted = await post("/v1/auth", { client_id: clientId, client_secret: clientSecret })
    expect(granted.status).toBe(200)
    const bearer = { authorization: `Bearer ${String(granted.body.access_token)}` }

    // A first, empty call deploys the wallet and tells its address; anvil then funds it.
    const recipient = "0x000000000000000000000000000000000000dEaD"
    const first = await post(
      "/v1/kernel/tx",
      { userId, chain: "anvil", to: [recipient], value: ["0"], data: ["0x"], auth: jwt },
      bearer
    )
    expect(first.status).toBe(200)
    await rpc("anvil_setBalance", [first.body.account, "0xde0b6b3a7640000"])
    const before = BigInt(String(await rpc("eth_getBalance", [recipient, "latest"])))
    const sent = await post(
      "/v1/kernel/tx",
      { userId, chain: "anvil", to: [recipient], value: ["250000000000000000"], data: ["0x"], auth: jwt },
      bearer
    )
    expect(sent.status).toBe(200)
    expect(sent.body.account).toBe(first.body.account)
    let after = before
    for (let i = 0; i < 100 && after === before; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      after = BigInt(String(await rpc("eth_getBalance", [recipient, "latest"])))
    }
    expect(after - before).toBe(250_000_000_000_000_000n)

    // The demo automation account pays out by its plan: 0.9 ETH available (1 less the 0.1 reserve), 60/40, to two
    // accounts nothing else uses: their balances rise by exactly what was paid (README step 7).
    const [, automation, payee1, payee2, apiKey] = (await playground.waitFor(
      /demo automation account (0x[0-9a-fA-F]{40}) .*plan: 60\/40 to (0x[0-9a-fA-F]{40}) and (0x[0-9a-fA-F]{40}).*test API key (wg_test_\S+)/
    )) as RegExpMatchArray
    // The first recipient README step 7 shows (account 12 of anvil's mnemonic).
    expect(payee1).toBe("0xFABB0ac9d68B0B445fB7357272Ff202C5651694a")
    const balanceOf = async (address: string | undefined) =>
      BigInt(String(await rpc("eth_getBalance", [address, "latest"])))
    expect([await balanceOf(payee1), await balanceOf(payee2)]).toEqual([0n, 0n])
    const payout = await post(`/v1/anvil/account/${automation}/payout/disperse`, {}, { "x-api-key": apiKey as string })
    expect(payout.status).toBe(200)
    // The README's sample answer has these fields, no more.
    expect(Object.keys(payout.body).sort()).toEqual(
      [
        "id",
        "network",
        "account",
        "transfers",
        "totals",
        "remainder",
        "userOpHash",
        "hash",
        "status",
        "meta",
        "operations"
      ].sort()
    )
    expect(payout.body).toMatchObject({ network: "anvil", account: automation, status: "submitted" })
    expect(payout.body.meta).toEqual({ status: "pending" })
    // One operation of both transfers (README: "operations":[{"index":0,"from":0,"to":2,…}]).
    expect(payout.body.operations).toMatchObject([{ index: 0, from: 0, to: 2, status: "submitted" }])
    expect(
      (payout.body.transfers as Array<{ recipient: string; amount: string }>).map((transfer) => [
        transfer.recipient,
        transfer.amount
      ])
    ).toEqual([
      [payee1, "540000000000000000"],
      [payee2, "360000000000000000"]
    ])
    let paid = [0n, 0n]
    for (let i = 0; i < 250 && paid[0] === 0n; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      paid = [await balanceOf(payee1), await balanceOf(payee2)]
    }
    expect(paid).toEqual([540_000_000_000_000_000n, 360_000_000_000_000_000n])

    // The dust-sweeping lookups of the demo holder: statuses, its sweep (4 DUST for 0.00008 ETH less 2.5 %:
    // 0.000078 ETH), and its standing DUST order with 12.5 − 4 = 8.5 left.
    const [, dustHolder] = (await playground.waitFor(/demo dust holder (0x[0-9a-fA-F]{40})/)) as RegExpMatchArray
    const get = async (path: string) => (await fetch(`${base}${path}`)).json() as Promise<Record<string, unknown>>
    const wallet = await get(`/api/${dustHolder}`)
    expect(
      (wallet.portfolio as Array<{ token: { symbol: string; status: string } }>).map((entry) => [
        entry.token.symbol,
        entry.token.status
      ])
    ).toEqual([
      ["ETH", "unsupported"],
      ["DUST", "approved"],
      ["USDX", "sweepable"],
      ["NOPR", "unsupported"]
    ])
    expect(wallet.past_orders).toMatchObject([{ erc20: { symbol: "DUST", amount: "4" }, value: { eth: "0.000078" } }])
    expect(await get("/api/orders")).toMatchObject([
      { balance: "8.5", token: ["DUST", expect.stringMatching(/^0x[0-9a-fA-F]{40}$/)], maker: dustHolder }
    ])
    playground.child.kill("SIGTERM")
    expect(await playground.exited).toBe(0)
  }, 120_000)

  it.each([
    [{ WALLETGATE_SMS: "carrier-pigeon" }, "WALLETGATE_SMS"],
    [{ WALLETGATE_SMS: "twilio" }, "TWILIO_ACCOUNT_SID"],
    [{ WALLETGATE_SMS: "twilio", TWILIO_ACCOUNT_SID: "AC1", TWILIO_AUTH_TOKEN: "t" }, "TWILIO_FROM"],
    [{ WALLETGATE_SMS: "webhook", WALLETGATE_SMS_WEBHOOK_URL: "not a url" }, "WALLETGATE_SMS_WEBHOOK_URL"],
    [{ PORT: "70000" }, "PORT"],
    // The playground serves its own chain: a networks setting it would ignore is refused.
    [{ WALLETGATE_NETWORKS: "[]" }, "WALLETGATE_NETWORKS is set, but the playground serves its own local chain"],
    [{ WALLETGATE_NETWORKS_FILE: "/etc/networks.json" }, "WALLETGATE_NETWORKS_FILE is set"],
    [{ WALLETGATE_MASTER_SECRET: "short" }, "WALLETGATE_MASTER_SECRET"],
    [{ WALLETGATE_IDENTITY_PROVIDERS: "[{" }, "WALLETGATE_IDENTITY_PROVIDERS"],
    [
      {
        WALLETGATE_IDENTITY_PROVIDERS: JSON.stringify([
          { name: "automation", issuer: "x", audience: "y", jwksUrl: "https://x/j", algorithms: ["RS256"] }
        ])
      },
      '"automation" is reserved by walletgate'
    ]
  ])("stops at start on invalid configuration %o, naming %s", async (env, variable) => {
    const playground = start(env)
    expect(await playground.exited).toBe(1)
    expect(playground.output()).toContain("invalid configuration")
    expect(playground.output()).toContain(variable)
  })
})

describe("the playground with REDIS_URL", () => {
  it("registers its demo app, key and account in Redis, where another gateway honours them and each restart's rotation", async () => {
    const redis = await startRedisServer()
    // A second gateway on the same Redis (this process), as another instance of a fleet would be: it serves "anvil"
    // (never reached here: a key is checked before anything is sent) and keeps nothing of its own.
    const stores = Layer.mergeAll(
      embeddedPorts({
        networks: [
          {
            slug: "anvil",
            chainId: 31337,
            rpcUrl: "http://127.0.0.1:9",
            testnet: true,
            contracts: { sweeper: zeroAddress }
          }
        ]
      }),
      RedisStores.layer({ url: redis.url })
    )
    const other = makeGateway({ ports: stores })
    const operator = Operator.layer.pipe(Layer.provide(SpendPolicy.layer), Layer.provide(stores))
    const ask = async (path: string, body: unknown, headers: Record<string, string> = {}) =>
      (
        await other.fetch(
          new Request(`http://127.0.0.1${path}`, {
            method: "POST",
            headers: { "content-type": "application/json", ...headers },
            body: JSON.stringify(body)
          })
        )
      ).status
    // A key the store knows reaches the account check (403 for an account it does not cover); an unknown or revoked
    // one is refused first (401).
    const payoutStatus = (key: string) =>
      ask(`/v1/anvil/account/${zeroAddress}/payout/disperse`, {}, { "x-api-key": key })
    const credentials = async () => {
      const playground = start({ REDIS_URL: redis.url })
      await playground.waitFor(/listening on/, 90_000)
      const [, clientId, clientSecret] = (await playground.waitFor(
        /client_id (\S+) client_secret (\S+)/
      )) as RegExpMatchArray
      const [, account, key] = (await playground.waitFor(
        /demo automation account (0x[0-9a-fA-F]{40}) .*test API key (wg_test_\S+)/
      )) as RegExpMatchArray
      expect(playground.output()).toContain("state: Redis (REDIS_URL), the demo app, key and account registered there")
      return { playground, clientId, clientSecret, account, key: key as string }
    }
    try {
      const first = await credentials()
      expect(await ask("/v1/auth", { client_id: first.clientId, client_secret: first.clientSecret })).toBe(200)
      expect(await payoutStatus(first.key)).toBe(403)
      // The key with its last character changed (to one it is not: a key ending in x would be the key itself).
      expect(await payoutStatus(`${first.key.slice(0, -1)}${first.key.endsWith("x") ? "y" : "x"}`)).toBe(401)
      first.playground.child.kill("SIGTERM")
      expect(await first.playground.exited).toBe(0)

      // A restart on the same Redis finds its demo app and account there: one client id, a new secret and key, and
      // what the first start printed is refused by the other gateway from now on.
      const second = await credentials()
      expect([second.clientId, second.account]).toEqual([first.clientId, first.account])
      expect(second.clientSecret).not.toBe(first.clientSecret)
      expect(await ask("/v1/auth", { client_id: first.clientId, client_secret: first.clientSecret })).toBe(401)
      expect(await ask("/v1/auth", { client_id: second.clientId, client_secret: second.clientSecret })).toBe(200)
      expect(await payoutStatus(first.key)).toBe(401)
      expect(await payoutStatus(second.key)).toBe(403)
      second.playground.child.kill("SIGTERM")
      expect(await second.playground.exited).toBe(0)

      // What the store holds: one demo app, one account, the first key revoked; the audit log says who did it.
      const held = await Effect.runPromise(
        Effect.gen(function* () {
          const service = yield* Operator
          return {
            apps: yield* service.listApps,
            accounts: yield* service.listAccounts,
            keys: yield* service.listKeys,
            audit: yield* service.readAudit()
          }
        }).pipe(Effect.provide(operator))
      )
      expect(held.apps.map((app) => [app.clientId, app.name, app.testMode])).toEqual([
        [first.clientId, "playground demo", true]
      ])
      expect(held.accounts.map((account) => account.address)).toEqual([first.account])
      expect(held.keys.map((key) => key.revokedAt === undefined)).toEqual([false, true])
      expect(held.audit.map((entry) => entry.action).reverse()).toEqual([
        "app.create",
        "account.register",
        "key.create",
        "app.rotate_secret",
        "key.revoke",
        "key.create"
      ])
      expect(held.audit.every((entry) => entry.actor.startsWith("cli:playground@"))).toBe(true)
      expect(JSON.stringify(held)).not.toContain(second.clientSecret)
    } finally {
      await other.dispose()
      await redis.stop()
    }
  }, 240_000)
})
