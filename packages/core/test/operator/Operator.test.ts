import {
  ApiKeyStore,
  AutomationAccounts,
  ClientStore,
  embeddedPorts,
  GasLedger,
  IdentityProviders,
  KeyVault,
  makeGateway,
  type NetworkConfig,
  Networks,
  RateLimiter,
  SecureRandom,
  SigningKeys,
  SpendPolicy
} from "@walletgate/core"
import { AppAuth } from "@walletgate/core/auth"
import { AuditLog, Operator, type OperatorCall } from "@walletgate/core/operator"
import { Context, Effect, Layer, ManagedRuntime } from "effect"
import { getAddress, zeroAddress } from "viem"
import { afterAll, describe, expect, it } from "vitest"

// The operator module over the in-memory ports, with AppAuth beside it to see what a change does to the gateway.
const ANVIL: NetworkConfig = {
  slug: "anvil",
  chainId: 31337,
  rpcUrl: "http://127.0.0.1:9",
  testnet: true,
  contracts: { sweeper: zeroAddress }
}
const ACCOUNT = getAddress("0x00000000000000000000000000000000000000cc")
const CLI: OperatorCall = { actor: { kind: "cli", user: "alice", host: "host1" } }
const API: OperatorCall = { actor: { kind: "api", tokenId: "ops-1", address: "127.0.0.1" }, requestId: "req-42" }

const ports = Layer.mergeAll(
  ClientStore.memory(),
  ApiKeyStore.memory(),
  AutomationAccounts.memory(),
  AuditLog.memory(),
  IdentityProviders.layer(),
  Networks.layer([ANVIL]),
  KeyVault.derived("operator-test-master-secret-0123456789abcdef"),
  SecureRandom.crypto,
  RateLimiter.memory,
  SigningKeys.ephemeral({ issuer: "walletgate" }),
  SpendPolicy.layer.pipe(Layer.provideMerge(GasLedger.memory))
)
const services = Layer.mergeAll(Operator.layer, AppAuth.layer()).pipe(Layer.provideMerge(ports))

/** Runs `effect` on a fresh store. */
const run = <A, E>(effect: Effect.Effect<A, E, Operator | AppAuth | Layer.Success<typeof ports>>) =>
  Effect.runPromise(Effect.provide(effect, services))

const grant = (clientId: string, clientSecret: string) =>
  Effect.flatMap(Effect.service(AppAuth), (auth) => auth.grant({ clientId, clientSecret, basic: false }))

/** Every string anywhere in `value`. */
const strings = (value: unknown): Array<string> =>
  typeof value === "string"
    ? [value]
    : typeof value === "object" && value !== null
      ? Object.values(value).flatMap(strings)
      : []

describe("Operator", () => {
  it("creates an app whose secret works once shown, lists it without secret or hash, and audits it", async () => {
    const { created, listed, audit, hash } = await run(
      Effect.gen(function* () {
        const operator = yield* Operator
        const created = yield* operator.createApp(CLI, { name: " Shop ", providers: ["phone"], testMode: true })
        yield* grant(created.clientId, created.clientSecret)
        const stored = yield* (yield* ClientStore).find(created.clientId)
        return {
          created,
          listed: yield* operator.listApps,
          audit: yield* operator.readAudit(),
          hash: stored?.secretHash ?? ""
        }
      })
    )
    expect(created).toMatchObject({ name: "Shop", providers: ["phone"], testMode: true })
    expect(created.clientSecret).toMatch(/^wgs_/)
    expect(Date.parse(created.createdAt)).toBeGreaterThan(0)
    expect(listed).toEqual([
      { clientId: created.clientId, name: "Shop", providers: ["phone"], testMode: true, createdAt: created.createdAt }
    ])
    expect(audit).toHaveLength(1)
    expect(audit[0]).toMatchObject({ actor: "cli:alice@host1", action: "app.create", target: created.clientId })
    for (const shown of [...strings(listed), ...strings(audit)]) {
      expect(shown).not.toContain(created.clientSecret)
      expect(shown).not.toContain(hash)
    }
  })

  it("rotates a secret: the old one is refused at once, the new one works, and nothing secret is audited", async () => {
    const { before, after, rotated, oldRefused, audit } = await run(
      Effect.gen(function* () {
        const operator = yield* Operator
        const before = yield* operator.createApp(CLI, { name: "Shop", providers: [] })
        const rotated = yield* operator.rotateSecret(API, before.clientId)
        const oldRefused = yield* Effect.flip(grant(before.clientId, before.clientSecret))
        const after = yield* grant(rotated.clientId, rotated.clientSecret)
        return { before, after, rotated, oldRefused, audit: yield* operator.readAudit() }
      })
    )
    expect(rotated.clientId).toBe(before.clientId)
    expect(rotated.clientSecret).not.toBe(before.clientSecret)
    expect(oldRefused).toMatchObject({ _tag: "OAuthError", error: "invalid_client" })
    expect(after.accessToken).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/)
    expect(audit[0]).toMatchObject({
      actor: "api:ops-1@127.0.0.1",
      action: "app.rotate_secret",
      target: before.clientId,
      requestId: "req-42"
    })
    for (const shown of strings(audit)) {
      expect(shown).not.toContain(before.clientSecret)
      expect(shown).not.toContain(rotated.clientSecret)
    }
  })

  it("revokes an app: its access tokens and its secret are refused at once; a second revocation is 404", async () => {
    const { tokenRefused, secretRefused, again, audit } = await run(
      Effect.gen(function* () {
        const operator = yield* Operator
        const auth = yield* AppAuth
        const app = yield* operator.createApp(CLI, { name: "Shop", providers: [] })
        const { accessToken } = yield* grant(app.clientId, app.clientSecret)
        yield* auth.authenticate(`Bearer ${accessToken}`)
        yield* operator.revokeApp(CLI, app.clientId)
        return {
          tokenRefused: yield* Effect.flip(auth.authenticate(`Bearer ${accessToken}`)),
          secretRefused: yield* Effect.flip(grant(app.clientId, app.clientSecret)),
          again: yield* Effect.flip(operator.revokeApp(CLI, app.clientId)),
          audit: yield* operator.readAudit()
        }
      })
    )
    expect(tokenRefused._tag).toBe("TokenRejected")
    expect(secretRefused._tag).toBe("OAuthError")
    expect(again._tag).toBe("AppNotFound")
    expect(audit.map((entry) => entry.action)).toEqual(["app.revoke", "app.create"])
  })

  it("grants and takes registered providers only, never reviving a revoked app", async () => {
    const result = await run(
      Effect.gen(function* () {
        const operator = yield* Operator
        const app = yield* operator.createApp(CLI, { name: "Shop", providers: [] })
        const granted = yield* operator.grantProvider(CLI, app.clientId, "tel")
        const unknown = yield* Effect.flip(operator.grantProvider(CLI, app.clientId, "acme"))
        const taken = yield* operator.ungrantProvider(CLI, app.clientId, "tel")
        yield* operator.revokeApp(CLI, app.clientId)
        const afterRevoke = yield* Effect.flip(operator.grantProvider(CLI, app.clientId, "phone"))
        return {
          granted,
          unknown,
          taken,
          afterRevoke,
          stored: yield* (yield* ClientStore).find(app.clientId),
          audit: yield* operator.readAudit()
        }
      })
    )
    expect(result.granted.providers).toEqual(["tel"])
    expect(result.unknown).toMatchObject({ _tag: "UnknownIdentityProvider", providers: ["acme"] })
    expect(result.taken.providers).toEqual([])
    expect(result.afterRevoke._tag).toBe("AppNotFound")
    expect(result.stored).toBeUndefined()
    expect(result.audit.map((entry) => [entry.action, entry.detail])).toEqual([
      ["app.revoke", undefined],
      ["app.ungrant", { provider: "tel" }],
      ["app.grant", { provider: "tel" }],
      ["app.create", { name: "Shop", providers: "", testMode: "false" }]
    ])
  })

  it("refuses bad input with stable errors", async () => {
    const errors = await run(
      Effect.gen(function* () {
        const operator = yield* Operator
        return yield* Effect.all([
          Effect.flip(operator.createApp(CLI, { name: "  ", providers: [] })),
          Effect.flip(operator.createApp(CLI, { name: "a\nb", providers: [] })),
          Effect.flip(operator.createApp(CLI, { name: "Shop", providers: ["nope"] })),
          Effect.flip(operator.createKey(CLI, { networks: ["anvil"], accounts: ["0x12"] })),
          Effect.flip(operator.createKey(CLI, { networks: ["mars"], accounts: [ACCOUNT] })),
          Effect.flip(operator.rotateSecret(CLI, "wgc_nobody")),
          Effect.flip(operator.revokeKey(CLI, "nobody")),
          Effect.flip(operator.setBudget(CLI, "wgc_nobody", 1)),
          Effect.flip(operator.registerAccount(CLI, { network: "anvil", accountKey: "t", coOwner: "0xnope" }))
        ])
      })
    )
    expect(errors.map((error) => error._tag)).toEqual([
      "InvalidOperatorInput",
      "InvalidOperatorInput",
      "UnknownIdentityProvider",
      "InvalidOperatorInput",
      "UnsupportedChain",
      "AppNotFound",
      "ApiKeyNotFound",
      "AppNotFound",
      "InvalidOperatorInput"
    ])
    expect(await run(Effect.flatMap(Effect.service(Operator), (operator) => operator.readAudit()))).toEqual([])
  })

  it("creates a key shown once, lists it without key or hash, and a revoked key is refused by the gateway", async () => {
    // The gateway reads the keys the operator writes: one store instance for both.
    const keys = Effect.runSync(
      Effect.scoped(Effect.map(Layer.build(ApiKeyStore.memory()), (built) => Context.get(built, ApiKeyStore)))
    )
    const shared = Layer.succeed(ApiKeyStore, keys)
    const gateway = makeGateway({ ports: Layer.mergeAll(embeddedPorts({ networks: [ANVIL] }), shared), loggers: [] })
    afterAll(() => gateway.dispose())
    const disperse = async (key: string) => {
      const response = await gateway.fetch(
        new Request(`http://gateway.test/v1/anvil/account/${ACCOUNT}/payout/disperse`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": key },
          body: "{}"
        })
      )
      return { status: response.status, body: (await response.json()) as { code?: string } }
    }
    const runtime = ManagedRuntime.make(Operator.layer.pipe(Layer.provide(Layer.merge(ports, shared))))
    afterAll(() => runtime.dispose())
    const operate = <A, E>(effect: Effect.Effect<A, E, Operator>) => runtime.runPromise(effect)
    const created = await operate(
      Effect.flatMap(Effect.service(Operator), (operator) =>
        operator.createKey(CLI, { networks: ["31337"], accounts: [ACCOUNT], mode: "test" })
      )
    )
    const before = await disperse(created.key)
    const revoke = Effect.flatMap(Effect.service(Operator), (operator) => operator.revokeKey(API, created.id))
    const revoked = await operate(revoke)
    const again = await operate(revoke)
    const refused = await disperse(created.key)
    const result = {
      created,
      revoked,
      again,
      listed: await operate(Effect.flatMap(Effect.service(Operator), (operator) => operator.listKeys)),
      audit: await operate(Effect.flatMap(Effect.service(Operator), (operator) => operator.readAudit()))
    }
    expect(before.body.code).not.toBe("invalid_api_key")
    expect(refused).toMatchObject({ status: 401, body: { code: "invalid_api_key" } })
    expect(result.created).toMatchObject({ mode: "test", networks: ["anvil"], accounts: [ACCOUNT.toLowerCase()] })
    expect(result.created.key).toMatch(/^wg_test_/)
    expect(result.revoked.revokedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    expect(result.again.revokedAt).toBe(result.revoked.revokedAt)
    expect(result.listed).toHaveLength(1)
    expect(result.listed[0]).not.toHaveProperty("key")
    expect(result.listed[0]).not.toHaveProperty("hash")
    expect(result.audit.map((entry) => [entry.action, entry.target])).toEqual([
      ["key.revoke", result.created.id],
      ["key.create", result.created.id]
    ])
    for (const shown of [...strings(result.listed), ...strings(result.audit)]) {
      expect(shown).not.toContain(result.created.key)
    }
  })

  it("registers an account at its counterfactual address with a plan, lists it, and audits it", async () => {
    const plan = {
      asset: zeroAddress,
      recipients: [{ address: ACCOUNT, shareBps: 10_000 }],
      minimumPayout: "1",
      reserve: "0"
    }
    const result = await run(
      Effect.gen(function* () {
        const operator = yield* Operator
        const account = yield* operator.registerAccount(CLI, { network: "anvil", accountKey: "treasury", plan })
        return { account, listed: yield* operator.listAccounts, audit: yield* operator.readAudit() }
      })
    )
    expect(result.account).toMatchObject({ network: "anvil", accountKey: "treasury", plan })
    expect(result.account.address).toBe(getAddress(result.account.address))
    expect(result.listed).toEqual([result.account])
    expect(result.audit[0]).toMatchObject({
      action: "account.register",
      target: `anvil:${result.account.address}`,
      detail: { accountKey: "treasury", plan: "1 recipients" }
    })
  })

  it("sets a day budget the spend policy honours: the next batch over it is refused 429", async () => {
    const result = await run(
      Effect.gen(function* () {
        const operator = yield* Operator
        const policy = yield* SpendPolicy
        const network = (yield* Networks).all[0]
        if (network === undefined) throw new Error("anvil is configured")
        const app = yield* operator.createApp(CLI, { name: "Shop", providers: [] })
        const set = yield* operator.setBudget(API, app.clientId, 1_500_000)
        // The payer as the kernel makes it, from the app as stored.
        const stored = yield* (yield* ClientStore).find(app.clientId)
        const payer = {
          kind: "batch" as const,
          app: app.clientId,
          user: "test:u",
          ...(stored?.gasPerDay === undefined ? {} : { gasPerDay: stored.gasPerDay })
        }
        yield* policy.reserve(network, payer, 1_000_000n)
        const refused = yield* Effect.flip(policy.reserve(network, payer, 600_000n))
        const budgets = yield* operator.showBudgets(app.clientId)
        const cleared = yield* operator.setBudget(CLI, app.clientId, undefined)
        const bad = yield* Effect.flip(operator.setBudget(CLI, app.clientId, 0))
        return { set, refused, budgets, cleared, bad, audit: yield* operator.readAudit({ limit: 2 }) }
      })
    )
    expect(result.set).toMatchObject({ gasPerDay: 1_500_000, usedToday: [{ network: "anvil", gas: 0 }] })
    expect(result.refused).toMatchObject({ _tag: "GasBudgetExhausted", budget: "app_day" })
    expect(result.budgets).toEqual([
      { ...result.set, usedToday: [{ network: "anvil", gas: 1_000_000 }], resetsAt: result.budgets[0]?.resetsAt }
    ])
    expect(result.cleared).not.toHaveProperty("gasPerDay")
    expect(result.bad._tag).toBe("InvalidOperatorInput")
    expect(result.audit.map((entry) => entry.detail)).toEqual([{ gasPerDay: "none" }, { gasPerDay: 1_500_000 }])
  })
})
