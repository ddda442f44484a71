// The operator commands of the CLI (apps, keys, accounts, budgets, audit) as operators run them: the built bin as a
// process, on a real redis-server, each change read back through the CLI and found in the audit log; no secret in
// any output after the one that made it.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RedisServer, startRedisServer } from "../../../store-redis/test/redis-server"
import { automationAddress } from "../payout/fixture"
import { operatorSession, runCli, writeNetworksFile } from "./walletgate"

const MASTER_SECRET = "cli-test-master-secret-of-32-characters-or-more"
const RECIPIENT = "0x52908400098527886E0F7030069857D2E4169EE7"
const ACCOUNT = "0x000000000000000000000000000000000000dEaD"
/** The CLI runs one after another here, each a second or two on a loaded machine. */
const SLOW = { timeout: 120_000 }

const folder = mkdtempSync(join(tmpdir(), "walletgate-cli-"))
let redis: RedisServer
let env: Record<string, string>
let operator: ReturnType<typeof operatorSession>

beforeAll(async () => {
  redis = await startRedisServer()
  env = {
    REDIS_URL: redis.url,
    WALLETGATE_REDIS_KEY_PREFIX: "cli-ops:",
    WALLETGATE_NETWORKS_FILE: writeNetworksFile(folder),
    WALLETGATE_MASTER_SECRET: MASTER_SECRET
  }
  operator = operatorSession(env)
})
afterAll(async () => {
  await redis?.stop()
  rmSync(folder, { recursive: true, force: true })
})

interface App {
  readonly clientId: string
  readonly providers: ReadonlyArray<string>
}

describe("walletgate apps, keys, accounts, budgets and audit on the gateways' Redis (CLI)", () => {
  let clientId = ""
  let keyId = ""
  let address = ""

  it(
    "creates an app shown with its secret once, lists it without, rotates its secret, grants and takes providers, revokes it",
    SLOW,
    async () => {
      const created = await operator.json<App & { clientSecret: string; name: string; testMode: boolean }>(
        "apps",
        "create",
        "--name",
        "Acme shop",
        "--providers",
        "phone",
        "--test-mode"
      )
      expect(created).toMatchObject({ name: "Acme shop", providers: ["phone"], testMode: true })
      expect(created.clientSecret).toMatch(/^wgs_/)
      operator.shown(created.clientSecret)
      clientId = created.clientId

      const listed = await operator.json<ReadonlyArray<Record<string, unknown>>>("apps", "list")
      expect(listed).toEqual([expect.objectContaining({ clientId, name: "Acme shop", testMode: true })])
      expect(Object.keys(listed[0] ?? {})).not.toContain("clientSecret")
      expect((await operator.run("apps", "list")).stdout).toMatch(
        new RegExp(`^${clientId} +Acme shop +phone +test`, "m")
      )

      const rotated = await operator.json<{ clientId: string; clientSecret: string }>("apps", "rotate-secret", clientId)
      expect(rotated.clientId).toBe(clientId)
      expect(rotated.clientSecret).not.toBe(created.clientSecret)
      operator.shown(rotated.clientSecret)

      expect((await operator.json<App>("apps", "providers", clientId, "--grant", "tel")).providers).toEqual([
        "phone",
        "tel"
      ])
      expect((await operator.json<App>("apps", "providers", clientId, "--revoke", "phone")).providers).toEqual(["tel"])
      // A provider the deployment has not registered is refused, naming it.
      const unknownProvider = await operator.run("apps", "providers", clientId, "--grant", "acme")
      expect(unknownProvider).toMatchObject({ status: 1, stdout: "" })
      expect(unknownProvider.stderr).toContain("[unknown_identity_provider]")

      // The human form shows a secret with the warning that it is shown once.
      const human = await operator.run("apps", "create", "--name", "Second", "--providers", "phone,tel")
      expect(human.status).toBe(0)
      const secret = /^client secret {2}(wgs_\S+)$/m.exec(human.stdout)?.[1] ?? ""
      expect(secret).toMatch(/^wgs_/)
      expect(human.stdout).toContain("This is the only time it is shown")
      operator.shown(secret)
      const second = /^client id {6}(wgc_\S+)$/m.exec(human.stdout)?.[1] ?? ""

      expect(await operator.json("apps", "revoke", second)).toEqual({ clientId: second, revoked: true })
      expect((await operator.json<ReadonlyArray<App>>("apps", "list")).map((app) => app.clientId)).toEqual([clientId])
      // An operator error: exit 1, its detail and code on stderr, nothing on stdout (with --json too).
      const again = await operator.run("apps", "revoke", second, "--json")
      expect(again).toMatchObject({ status: 1, stdout: "" })
      expect(again.stderr).toBe(`walletgate: No app with this client id. (${second}) [app_not_found]\n`)
    }
  )

  it("creates an API key shown once, lists it without the key, revokes it", SLOW, async () => {
    const created = await operator.json<{ id: string; key: string; mode: string; networks: ReadonlyArray<string> }>(
      "keys",
      "create",
      "--network",
      "31337",
      "--account",
      ACCOUNT,
      "--mode",
      "test"
    )
    expect(created).toMatchObject({ mode: "test", networks: ["anvil"], accounts: [ACCOUNT.toLowerCase()] })
    expect(created.key).toMatch(/^wg_test_/)
    operator.shown(created.key)
    keyId = created.id

    const listed = await operator.json<ReadonlyArray<Record<string, unknown>>>("keys", "list")
    expect(listed).toEqual([expect.objectContaining({ id: keyId, mode: "test", networks: ["anvil"] })])
    expect(Object.keys(listed[0] ?? {})).not.toContain("key")
    expect((await operator.run("keys", "list")).stdout).toMatch(new RegExp(`^${keyId} +test +active`, "m"))

    const revoked = await operator.json<{ id: string; revokedAt?: string }>("keys", "revoke", keyId)
    expect(revoked.id).toBe(keyId)
    expect(revoked.revokedAt).toMatch(/^20\d\d-/)
    expect((await operator.run("keys", "list")).stdout).toMatch(new RegExp(`^${keyId} +test +revoked 20`, "m"))

    // A network the networks file does not have, and a key id no key has, are refused with their codes.
    const elsewhere = await operator.run("keys", "create", "--network", "base", "--account", ACCOUNT)
    expect(elsewhere).toMatchObject({ status: 1, stdout: "" })
    expect(elsewhere.stderr).toContain("[unsupported_chain]")
    expect((await operator.run("keys", "revoke", "nosuchkey000")).stderr).toContain("[api_key_not_found]")
  })

  it(
    "registers an automation account with a payout plan: its Safe's address, known before deployment",
    SLOW,
    async () => {
      const planFile = join(folder, "plan.json")
      const plan = {
        asset: "0x0000000000000000000000000000000000000000",
        recipients: [{ address: RECIPIENT, shareBps: 10_000 }],
        minimumPayout: "1000",
        reserve: "0"
      }
      writeFileSync(planFile, JSON.stringify(plan))
      const account = await operator.json<{ address: string; plan: unknown }>(
        "accounts",
        "register",
        "--network",
        "anvil",
        "--key",
        "payroll-1",
        "--plan",
        planFile
      )
      // The address the gateways derive from the same master secret.
      address = automationAddress(MASTER_SECRET, "payroll-1")
      expect(account).toEqual({ address, network: "anvil", accountKey: "payroll-1", plan })
      expect(await operator.json("accounts", "list")).toEqual([account])

      // A plan whose shares do not add up is refused naming the file; nothing is registered.
      writeFileSync(planFile, JSON.stringify({ ...plan, recipients: [{ address: RECIPIENT, shareBps: 9_000 }] }))
      const refused = await operator.run(
        "accounts",
        "register",
        "--network",
        "anvil",
        "--key",
        "payroll-2",
        "--plan",
        planFile
      )
      expect(refused).toMatchObject({ status: 1, stdout: "" })
      expect(refused.stderr).toContain(`--plan ${planFile} is not a payout plan`)
      // Without the master secret the address cannot be known: refused naming it.
      const { WALLETGATE_MASTER_SECRET: _, ...withoutSecret } = env
      const noSecret = await runCli(withoutSecret, ["accounts", "register", "--network", "anvil", "--key", "payroll-3"])
      expect(noSecret).toMatchObject({ status: 1, stdout: "" })
      expect(noSecret.stderr).toContain("WALLETGATE_MASTER_SECRET is not set")
      expect(await operator.json("accounts", "list")).toEqual([account])
    }
  )

  it("sets an app's day budget and shows it with its use today", SLOW, async () => {
    const set = await operator.json<{ gasPerDay: number }>(
      "budgets",
      "set",
      "--app",
      clientId,
      "--gas-per-day",
      "5000000"
    )
    expect(set).toMatchObject({ clientId, gasPerDay: 5_000_000, usedToday: [{ network: "anvil", gas: 0 }] })
    expect(await operator.json("budgets", "show", "--app", clientId)).toEqual([set])
    expect(await operator.json("budgets", "show")).toEqual([set])
    expect((await operator.run("budgets", "set", "--app", clientId, "--gas-per-day", "0")).stderr).toContain(
      "--gas-per-day is a whole number from 1"
    )
  })

  it("reads every change in the audit log, newest first, with who did it, and no secret", SLOW, async () => {
    const entries = await operator.json<ReadonlyArray<Record<string, unknown>>>("audit")
    expect(entries.map((entry) => [entry.action, entry.target])).toEqual([
      ["budget.set", clientId],
      ["account.register", `anvil:${address}`],
      ["key.revoke", keyId],
      ["key.create", keyId],
      ["app.revoke", expect.stringMatching(/^wgc_/)],
      ["app.create", expect.stringMatching(/^wgc_/)],
      ["app.ungrant", clientId],
      ["app.grant", clientId],
      ["app.rotate_secret", clientId],
      ["app.create", clientId]
    ])
    for (const entry of entries) {
      expect(Date.parse(String(entry.at))).toBeGreaterThan(Date.now() - 600_000)
      expect(new Date(String(entry.at)).toISOString()).toBe(entry.at)
      expect(entry.actor).toMatch(/^cli:[^@\s]+@\S+$/)
    }
    expect(await operator.json<ReadonlyArray<unknown>>("audit", "--limit", "2")).toEqual(entries.slice(0, 2))
    expect(await operator.json("audit", "--since", "2999-01-01")).toEqual([])
    expect(await operator.json("audit", "--since", "1h")).toEqual(entries)
    // The human form too; operator.run has checked every output of this file for the secrets shown before it.
    expect((await operator.run("audit")).stdout).toContain("app.rotate_secret")
    expect(operator.secrets()).toHaveLength(4)
  })
})

describe("walletgate without the gateways' store (CLI)", () => {
  it("refuses every store command without REDIS_URL, naming it, and writes nothing on stdout", SLOW, async () => {
    const { REDIS_URL: _, ...noRedis } = env
    for (const args of [
      ["apps", "create", "--name", "x", "--providers", "phone"],
      ["apps", "list"],
      ["keys", "list", "--json"],
      ["keys", "create", "--network", "anvil", "--account", ACCOUNT],
      ["accounts", "list"],
      ["budgets", "show"],
      ["audit", "--json"]
    ]) {
      const answer = await runCli(noRedis, args)
      expect({ args, status: answer.status, stdout: answer.stdout }).toEqual({ args, status: 1, stdout: "" })
      expect(answer.stderr).toMatch(/^walletgate: REDIS_URL is not set/)
    }
  })

  it("fails fast naming the store when the Redis of REDIS_URL does not answer", SLOW, async () => {
    const closed = await runCli({ ...env, REDIS_URL: "redis://127.0.0.1:9" }, ["apps", "list", "--json"])
    expect(closed).toMatchObject({ status: 1, stdout: "" })
    expect(closed.stderr).toContain("[store_unavailable]")
  })

  it("names an unknown command, and answers --help for each store command without running it", SLOW, async () => {
    expect(await runCli(env, ["frob"])).toMatchObject({ status: 1, stdout: "" })
    expect((await runCli(env, ["frob"])).stderr).toMatch(/^walletgate: unknown command "frob"\n/)
    expect((await runCli(env, ["apps", "frob"])).stderr).toMatch(/^walletgate: unknown command "apps frob"/)
    for (const [args, says] of [
      [["apps", "create", "--help"], "needs: REDIS_URL"],
      [["apps", "rotate-secret", "--help"], "refuses the\nold one"],
      [["keys", "create", "--help"], "WALLETGATE_NETWORKS_FILE"],
      [["accounts", "register", "--help"], "WALLETGATE_MASTER_SECRET"],
      [["budgets", "set", "--help"], "--gas-per-day <n>"],
      [["audit", "--help"], "--since <time>"],
      [["--help"], "Errors go to stderr"]
    ] as const) {
      const answer = await runCli({}, args)
      expect({ args, status: answer.status }).toEqual({ args, status: 0 })
      expect(answer.stdout).toContain(says)
    }
  })
})
