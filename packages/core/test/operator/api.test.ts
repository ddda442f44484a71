// The operator API over real HTTP: a gateway behind the Express adapter on 127.0.0.1, every route's happy path and
// audit entry, and what an attacker tries (no token, a wrong one, a user's or an app's token, a token one character
// off, a burst, unknown fields, prototype names as ids); no secret in any later answer, the audit log or the log.
import { embeddedPorts, type Gateway, makeGateway, type NetworkConfig, TransactionLog } from "@walletgate/core"
import type { TxRecord } from "@walletgate/core/state"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import { afterEach, describe, expect, it } from "vitest"
import { serveOverHttp } from "../serveHttp"

const TOKEN = "op-token-0123456789abcdef0123456789abcdef"
const SECOND = "second-token-fedcba9876543210fedcba987654"
const PHONE = "+14155550100"
const ACCOUNT = "0x52908400098527886E0F7030069857D2E4169EE7"

/** A network whose node and bundler are never reached (a closed port): nothing here sends an operation. */
const unreachable: NetworkConfig = {
  slug: "anvil",
  chainId: 31337,
  rpcUrl: "http://127.0.0.1:9",
  testnet: true,
  contracts: { sweeper: "0x0000000000000000000000000000000000000004" },
  rpcDeadlineMs: 500,
  erc4337: { bundlerUrl: "http://127.0.0.1:9" }
}

/** Two recorded operations: one final, one pending on a network whose node cannot be read (so it stays pending). */
const RECORDS: ReadonlyArray<TxRecord> = [
  {
    id: "00000000-0000-4000-8000-000000000001",
    kind: "kernel",
    owner: "wgc_first",
    network: "anvil",
    chainId: 31337,
    account: ACCOUNT,
    userOpHash: `0x${"1".repeat(64)}`,
    txHash: `0x${"2".repeat(64)}`,
    status: "confirmed",
    blockNumber: 7,
    gasUsed: "52341",
    createdAt: Date.parse("2026-01-01T00:00:00Z"),
    details: { userId: "phone:+14155550123" }
  },
  {
    id: "00000000-0000-4000-8000-000000000002",
    kind: "payout",
    owner: "key000000001",
    network: "anvil",
    chainId: 31337,
    account: ACCOUNT,
    userOpHash: `0x${"3".repeat(64)}`,
    status: "submitted",
    createdAt: Date.parse("2026-01-02T00:00:00Z"),
    details: {}
  }
]

/** The memory transaction log holding {@link RECORDS}. */
const seededLog = Layer.effect(
  TransactionLog,
  Effect.gen(function* () {
    const log = yield* TransactionLog
    yield* Effect.forEach(RECORDS, log.save)
    return log
  })
).pipe(Layer.provide(TransactionLog.memory))

const capture = () => {
  const lines: Array<string> = []
  const logger = Logger.make((options) => {
    lines.push(
      JSON.stringify({
        message: String(options.message),
        annotations: { ...options.fiber.getRef(References.CurrentLogAnnotations) }
      })
    )
  })
  return { lines, logger }
}

const servers: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((close) => close()))
})

/** Serves `gateway` over HTTP ({@link serveOverHttp}), stopped after each test; calls it with the operator token. */
const serve = async (gateway: Gateway) => {
  const { base, close } = await serveOverHttp(gateway)
  servers.push(close)
  return async (
    method: string,
    path: string,
    options: { readonly body?: unknown; readonly token?: string | null; readonly headers?: Record<string, string> } = {}
  ) => {
    const token = options.token === undefined ? TOKEN : options.token
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(options.body === undefined ? {} : { "content-type": "application/json" }),
        ...(token === null ? {} : { authorization: `Bearer ${token}` }),
        ...options.headers
      },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
    })
    const text = await response.text()
    return {
      status: response.status,
      headers: response.headers,
      text,
      body: text === "" ? undefined : JSON.parse(text)
    }
  }
}

type Call = Awaited<ReturnType<typeof serve>>

const operatorGateway = (extra: { readonly requestsPerMinute?: number } = {}) => {
  const { lines, logger } = capture()
  const gateway = makeGateway({
    ports: Layer.mergeAll(
      embeddedPorts({ networks: [unreachable], otp: { testPhones: { [PHONE]: "123456" } } }),
      seededLog
    ),
    loggers: [logger],
    operatorTokens: [
      { id: "ops-a", token: TOKEN },
      { id: "ops-b", token: SECOND }
    ],
    ...(extra.requestsPerMinute === undefined ? {} : { operatorRequestsPerMinute: extra.requestsPerMinute })
  })
  return { gateway, lines }
}

/** Runs every change once; answers the secrets it was shown. */
const changeEverything = async (call: Call) => {
  const created = await call("POST", "/v1/operator/apps", {
    body: { name: "Shop", providers: ["phone"] },
    headers: { "x-request-id": "req-create" }
  })
  expect(created.status).toBe(201)
  expect(created.headers.get("cache-control")).toBe("no-store")
  const { clientId, clientSecret } = created.body as { clientId: string; clientSecret: string }
  const rotated = await call("POST", `/v1/operator/apps/${clientId}/rotate-secret`)
  expect(rotated.status).toBe(200)
  const key = await call("POST", "/v1/operator/keys", {
    body: { networks: ["anvil"], accounts: [ACCOUNT], mode: "test" }
  })
  expect(key.status).toBe(201)
  return {
    clientId,
    keyId: (key.body as { id: string }).id,
    secrets: [clientSecret, (rotated.body as { clientSecret: string }).clientSecret, (key.body as { key: string }).key]
  }
}

describe("the operator API", () => {
  it("serves every operation, each change audited with the token's id, the client address and the request id", async () => {
    const { gateway } = operatorGateway()
    const call = await serve(gateway)
    const { clientId, keyId } = await changeEverything(call)

    const apps = await call("GET", "/v1/operator/apps")
    expect(apps.body).toEqual([expect.objectContaining({ clientId, name: "Shop", providers: ["phone"] })])
    const granted = await call("POST", `/v1/operator/apps/${clientId}/providers`, {
      body: { revoke: "phone" },
      token: SECOND
    })
    expect(granted.body).toMatchObject({ clientId, providers: [] })
    expect(
      (await call("POST", `/v1/operator/apps/${clientId}/providers`, { body: { grant: "phone" } })).body
    ).toMatchObject({
      providers: ["phone"]
    })
    expect((await call("GET", "/v1/operator/keys")).body).toEqual([
      expect.objectContaining({ id: keyId, mode: "test", networks: ["anvil"], accounts: [ACCOUNT.toLowerCase()] })
    ])
    const account = await call("POST", "/v1/operator/accounts", {
      body: {
        network: "anvil",
        accountKey: "treasury",
        plan: {
          asset: "0x0000000000000000000000000000000000000000",
          recipients: [{ address: ACCOUNT, shareBps: 10_000 }],
          minimumPayout: "1000",
          reserve: "0"
        }
      }
    })
    expect(account.status, account.text).toBe(201)
    expect(account.body).toMatchObject({
      network: "anvil",
      accountKey: "treasury",
      address: expect.stringMatching(/^0x/)
    })
    // The node of this network is never reached: the balance is said to be unknown, the listing still answers.
    expect((await call("GET", "/v1/operator/accounts")).body).toEqual([{ ...account.body, balanceWei: null }])
    const budget = await call("PUT", `/v1/operator/budgets/${clientId}`, { body: { gasPerDay: 5_000_000 } })
    expect(budget.body).toMatchObject({ clientId, gasPerDay: 5_000_000, usedToday: [{ network: "anvil", gas: 0 }] })
    expect((await call("GET", `/v1/operator/budgets?app=${clientId}`)).body).toEqual([budget.body])
    expect((await call("DELETE", `/v1/operator/keys/${keyId}`)).body).toMatchObject({
      id: keyId,
      revokedAt: expect.any(String)
    })
    expect((await call("DELETE", `/v1/operator/apps/${clientId}`)).status).toBe(204)
    expect((await call("GET", "/v1/operator/apps")).body).toEqual([])

    const audit = await call("GET", "/v1/operator/audit?limit=100")
    const entries = audit.body as ReadonlyArray<{ action: string; actor: string; target: string; requestId?: string }>
    expect(entries.map((entry) => entry.action)).toEqual([
      "app.revoke",
      "key.revoke",
      "budget.set",
      "account.register",
      "app.grant",
      "app.ungrant",
      "key.create",
      "app.rotate_secret",
      "app.create"
    ])
    expect(entries.find((entry) => entry.action === "app.ungrant")?.actor).toBe("api:ops-b@127.0.0.1")
    expect(entries.find((entry) => entry.action === "app.create")).toMatchObject({
      actor: "api:ops-a@127.0.0.1",
      target: clientId,
      requestId: "req-create"
    })
    expect((await call("GET", "/v1/operator/audit?limit=2")).body).toEqual(entries.slice(0, 2))
    expect((await call("GET", "/v1/operator/audit?since=2999-01-01T00:00:00Z")).body).toEqual([])
  })

  it("lists recent operations of every app, newest first, with the user id masked, by app, status and time", async () => {
    const call = await serve(operatorGateway().gateway)
    const all = await call("GET", "/v1/operator/operations")
    expect(all.status).toBe(200)
    expect(all.body).toEqual([
      expect.objectContaining({ id: RECORDS[1]?.id, app: "key000000001", kind: "payout", status: "submitted" }),
      {
        id: RECORDS[0]?.id,
        app: "wgc_first",
        kind: "kernel",
        network: "anvil",
        account: ACCOUNT,
        user: "***0123",
        userOpHash: RECORDS[0]?.userOpHash,
        txHash: RECORDS[0]?.txHash,
        status: "confirmed",
        blockNumber: 7,
        gasUsed: "52341",
        createdAt: "2026-01-01T00:00:00.000Z"
      }
    ])
    expect(all.text).not.toContain("4155550123")
    const ids = async (query: string) =>
      ((await call("GET", `/v1/operator/operations?${query}`)).body as ReadonlyArray<{ id: string }>).map((op) => op.id)
    expect(await ids("app=wgc_first")).toEqual([RECORDS[0]?.id])
    expect(await ids("status=submitted")).toEqual([RECORDS[1]?.id])
    expect(await ids("until=2026-01-01T12:00:00Z")).toEqual([RECORDS[0]?.id])
    expect(await ids("since=2026-01-01T12:00:00Z&limit=1")).toEqual([RECORDS[1]?.id])
    expect((await call("GET", "/v1/operator/operations?status=lost")).status).toBe(400)
    expect((await call("GET", "/v1/operator/operations?limit=-1")).status).toBe(400)
  })

  it("reports each network's bundler and paymaster, saying what does not answer", async () => {
    const call = await serve(operatorGateway().gateway)
    const networks = await call("GET", "/v1/operator/networks")
    expect(networks.status).toBe(200)
    expect(networks.body).toEqual([
      {
        network: "anvil",
        chainId: 31337,
        healthy: false,
        bundler: { reachable: false, entryPointSupported: false },
        paymaster: null
      }
    ])
  })

  it("lets the operator's health detail through with any configured token, by the same check", async () => {
    const call = await serve(operatorGateway().gateway)
    const detail = await call("GET", "/v1/health", { token: SECOND })
    const anonymous = await call("GET", "/v1/health", { token: null })
    expect(detail.body).toHaveProperty("spend")
    expect(anonymous.body).not.toHaveProperty("spend")
  })

  it("is in the OpenAPI document with the operator security scheme", async () => {
    const call = await serve(operatorGateway().gateway)
    const document = (await call("GET", "/openapi.json", { token: null })).body as {
      paths: Record<string, Record<string, { security?: unknown }>>
      components: { securitySchemes: Record<string, unknown> }
    }
    for (const path of [
      "/v1/operator/apps",
      "/v1/operator/apps/{clientId}/rotate-secret",
      "/v1/operator/apps/{clientId}",
      "/v1/operator/apps/{clientId}/providers",
      "/v1/operator/keys",
      "/v1/operator/keys/{id}",
      "/v1/operator/accounts",
      "/v1/operator/budgets",
      "/v1/operator/budgets/{clientId}",
      "/v1/operator/audit",
      "/v1/operator/operations",
      "/v1/operator/networks"
    ]) {
      const operations = Object.values(document.paths[path] ?? {})
      expect(operations.length, path).toBeGreaterThan(0)
      for (const operation of operations) expect(operation.security).toEqual([{ operator: [] }])
    }
    expect(document.components.securitySchemes.operator).toMatchObject({ type: "http", scheme: "bearer" })
  })

  it("is not served without an operator token", async () => {
    const call = await serve(makeGateway({ ports: embeddedPorts() }))
    expect((await call("GET", "/v1/operator/apps")).status).toBe(404)
    expect(() => makeGateway({ operatorTokens: [{ id: "short", token: "too-short" }] })).toThrow(RangeError)
  })
})

describe("the operator API, attacked", () => {
  const refused = async (answer: Awaited<ReturnType<Call>>) => {
    expect(answer.status).toBe(401)
    expect(answer.headers.get("content-type")).toMatch(/^application\/problem\+json/)
    expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer/)
    expect(answer.headers.get("cache-control")).toBe("no-store")
    expect(answer.body).toMatchObject({ code: "operator_unauthorized" })
  }

  it("refuses no token, a wrong one, a user's token, an app's token and a token one character off", async () => {
    const { gateway, lines } = operatorGateway()
    const call = await serve(gateway)
    await refused(await call("GET", "/v1/operator/apps", { token: null }))
    await refused(await call("GET", "/v1/operator/apps", { token: "x".repeat(64) }))
    await refused(await call("GET", "/v1/operator/apps", { token: `${TOKEN.slice(0, -1)}0` }))
    await refused(await call("GET", "/v1/operator/apps", { token: `0${TOKEN.slice(1)}` }))
    await refused(await call("GET", "/v1/operator/apps", { headers: { authorization: `Basic ${TOKEN}` }, token: null }))
    // Lengths other than the token's: compared as raw strings, timingSafeEqual would throw (a 500); the check compares
    // SHA-256 digests, 32 bytes against 32 bytes, whatever is sent.
    await refused(await call("GET", "/v1/operator/apps", { token: TOKEN.slice(0, -1) }))
    await refused(await call("GET", "/v1/operator/apps", { token: `${TOKEN}${"a".repeat(4000)}` }))
    await refused(await call("GET", "/v1/operator/apps", { token: "a" }))

    await call("POST", "/functions/v1/signInWithOTP", { body: { phone: PHONE }, token: null })
    const session = await call("POST", "/functions/v1/verifyOTP", {
      body: { phone: PHONE, token: "123456" },
      token: null
    })
    const userToken = (session.body as { access_token: string }).access_token
    expect(userToken).toMatch(/^ey/)
    await refused(await call("GET", "/v1/operator/apps", { token: userToken }))

    const { clientId } = await changeEverything(call)
    const rotated = await call("POST", `/v1/operator/apps/${clientId}/rotate-secret`)
    const granted = await call("POST", "/v1/auth", {
      body: {
        grant_type: "client_credentials",
        client_id: clientId,
        client_secret: (rotated.body as { clientSecret: string }).clientSecret
      },
      token: null
    })
    const appToken = (granted.body as { access_token: string }).access_token
    expect(appToken).toMatch(/^ey/)
    await refused(await call("GET", "/v1/operator/apps", { token: appToken }))
    await refused(await call("DELETE", `/v1/operator/apps/${clientId}`, { token: appToken }))
    // Nothing a refused caller sent was acted on, and no token reached the log.
    expect((await call("GET", "/v1/operator/apps")).body).toHaveLength(1)
    const logged = lines.join("\n")
    for (const secret of [TOKEN, SECOND, userToken, appToken]) expect(logged).not.toContain(secret)
  })

  it("answers a burst from one address 429 with Retry-After, tokens or not", async () => {
    const call = await serve(operatorGateway({ requestsPerMinute: 5 }).gateway)
    const answers = []
    for (let i = 0; i < 5; i++)
      answers.push((await call("GET", "/v1/operator/apps", { token: i % 2 === 0 ? "wrong-token" : TOKEN })).status)
    expect(answers).toEqual([401, 200, 401, 200, 401])
    const limited = await call("GET", "/v1/operator/apps")
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    expect(limited.body).toMatchObject({ code: "rate_limited" })
  })

  it("refuses an unknown field in every body, and a malformed one, with 400 and changes nothing", async () => {
    const call = await serve(operatorGateway().gateway)
    const { clientId } = await changeEverything(call)
    for (const [method, path, body] of [
      ["POST", "/v1/operator/apps", { name: "x", providers: [], admin: true }],
      ["POST", `/v1/operator/apps/${clientId}/providers`, { grant: "phone", revoke: "phone" }],
      ["POST", "/v1/operator/keys", { networks: ["anvil"], accounts: [ACCOUNT], scope: "all" }],
      ["POST", "/v1/operator/accounts", { network: "anvil", accountKey: "k", owner: ACCOUNT }],
      ["PUT", `/v1/operator/budgets/${clientId}`, { gasPerDay: 1, unlimited: true }],
      ["PUT", `/v1/operator/budgets/${clientId}`, { gasPerDay: "lots" }],
      ["POST", "/v1/operator/apps", { name: "x".repeat(101), providers: [] }]
    ] as const) {
      const answer = await call(method, path, { body })
      expect(answer.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(400)
    }
    expect((await call("GET", "/v1/operator/apps")).body).toHaveLength(1)
    expect((await call("GET", "/v1/operator/audit?since=0")).status).toBe(400)
    expect((await call("GET", "/v1/operator/audit?limit=10&admin=1")).status).toBe(400)
  })

  it("answers a clientId or key id named __proto__ or constructor 404, never 500", async () => {
    const call = await serve(operatorGateway().gateway)
    for (const name of ["__proto__", "constructor", "toString", "hasOwnProperty"]) {
      for (const [method, path, body] of [
        ["POST", `/v1/operator/apps/${name}/rotate-secret`, undefined],
        ["DELETE", `/v1/operator/apps/${name}`, undefined],
        ["POST", `/v1/operator/apps/${name}/providers`, { grant: "phone" }],
        ["PUT", `/v1/operator/budgets/${name}`, { gasPerDay: 1 }],
        ["GET", `/v1/operator/budgets?app=${name}`, undefined],
        ["DELETE", `/v1/operator/keys/${name}`, undefined]
      ] as const) {
        const answer = await call(method, path, body === undefined ? {} : { body })
        expect(answer.status, `${method} ${path}`).toBe(404)
      }
    }
  })

  it("shows each secret once: in no later answer, audit entry or log line", async () => {
    const { gateway, lines } = operatorGateway()
    const call = await serve(gateway)
    const { secrets } = await changeEverything(call)
    const later = await Promise.all(
      [
        "/v1/operator/apps",
        "/v1/operator/keys",
        "/v1/operator/accounts",
        "/v1/operator/budgets",
        "/v1/operator/audit"
      ].map((path) => call("GET", path))
    )
    const seen = [...later.map((answer) => answer.text), lines.join("\n")].join("\n")
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(20)
      expect(seen).not.toContain(secret)
    }
    expect(seen).not.toContain(TOKEN)
  })
})
