import { SecureRandom } from "@walletgate/core"
import type { AutomationAccount, NewApiKey } from "@walletgate/core/payout"
import { Effect, Logger } from "effect"
import { type Address, parseEther, zeroAddress } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeApiKey } from "../../src/payout/ApiKeys"
import { freshAddress, startKernelFixture } from "../kernel/fixture"

type Fixture = Awaited<ReturnType<typeof startKernelFixture>>
type AccountName = "native" | "token" | "explicit" | "race" | "idem" | "unplanned" | "live"
const NAMES: ReadonlyArray<AccountName> = ["native", "token", "explicit", "race", "idem", "unplanned", "live"]

const newKey = (options: NewApiKey) => Effect.runSync(makeApiKey(options).pipe(Effect.provide(SecureRandom.crypto)))

describe("payout disperse on a real anvil", () => {
  let f: Fixture
  const [alice, bob, carol] = [freshAddress(), freshAddress(), freshAddress()]
  const lines: Array<string> = []
  const account = {} as Record<AccountName, Address>
  const keys = {} as Record<"main" | "revoked" | "otherNetwork" | "otherAccount" | "testOnLive", string>

  beforeAll(async () => {
    f = await startKernelFixture({
      loggers: [Logger.map(Logger.formatJson, (line) => void lines.push(line))],
      automation: (token) => [
        // A third each in basis points (3333 + 3333 + 3334): flooring leaves a remainder.
        {
          accountKey: "native",
          plan: {
            asset: zeroAddress,
            recipients: [
              { address: alice, shareBps: 3333 },
              { address: bob, shareBps: 3333 },
              { address: carol, shareBps: 3334 }
            ],
            minimumPayout: "1000",
            reserve: "100000000000000000"
          }
        },
        {
          accountKey: "token",
          plan: {
            asset: token,
            recipients: [
              { address: alice, shareBps: 5000 },
              { address: bob, shareBps: 3000 },
              { address: carol, shareBps: 2000 }
            ],
            minimumPayout: "1",
            reserve: "7"
          }
        },
        { accountKey: "explicit" },
        {
          accountKey: "race",
          plan: {
            asset: zeroAddress,
            recipients: [{ address: alice, shareBps: 10_000 }],
            minimumPayout: "1",
            reserve: "0"
          }
        },
        {
          accountKey: "idem",
          plan: {
            asset: zeroAddress,
            recipients: [{ address: bob, shareBps: 10_000 }],
            minimumPayout: "1",
            reserve: "0"
          }
        },
        { accountKey: "unplanned" },
        { accountKey: "live", network: "live" }
      ],
      apiKeys: (accounts: ReadonlyArray<AutomationAccount>) => {
        const mine = accounts.filter((a) => a.network === "anvil").map((a) => a.address)
        const live = accounts.filter((a) => a.network === "live").map((a) => a.address)
        const made = {
          main: newKey({ mode: "live", networks: ["anvil", "live"], accounts: [...mine, ...live] }),
          revoked: newKey({ mode: "live", networks: ["anvil"], accounts: mine }),
          otherNetwork: newKey({ mode: "live", networks: ["live"], accounts: mine }),
          otherAccount: newKey({ mode: "live", networks: ["anvil"], accounts: [freshAddress()] }),
          testOnLive: newKey({ mode: "test", networks: ["anvil", "live"], accounts: live })
        }
        for (const [name, { key }] of Object.entries(made)) keys[name as keyof typeof keys] = key
        return Object.entries(made).map(([name, { record }]) =>
          name === "revoked" ? { ...record, revokedAt: Date.now() } : record
        )
      }
    })
    for (const [index, name] of NAMES.entries()) account[name] = f.automationAccounts[index]?.address as Address
    await f.fund(account.native, 1_000_000_000_000_000_001n)
    await f.fund(account.token, 0n, 1_000_000n)
    await f.fund(account.explicit, parseEther("1"), 500n)
    await f.fund(account.race, 12_345n)
    await f.fund(account.idem, 999n)
  })
  afterAll(async () => {
    await f.stop()
  })

  const path = (name: AccountName, network = "anvil") => `/v1/${network}/account/${account[name]}/payout/disperse`
  const disperse = (
    name: AccountName,
    body: unknown = {},
    headers: Record<string, string> = { "x-api-key": keys.main }
  ) => f.call("POST", path(name), body, headers)
  const mined = (answer: { body: Record<string, unknown> }) =>
    f.publicClient.waitForTransactionReceipt({ hash: answer.body.txHash as `0x${string}` })
  const balance = (address: Address) => f.publicClient.getBalance({ address })

  it("pays the native balance less the reserve by shares, floored, and keeps the remainder", async () => {
    const answer = await disperse("native")
    expect(answer.status).toBe(200)
    // available = 1_000_000_000_000_000_001 - 100_000_000_000_000_000 = 900_000_000_000_000_001
    const third = (900_000_000_000_000_001n * 3333n) / 10_000n
    const last = (900_000_000_000_000_001n * 3334n) / 10_000n
    const remainder = 900_000_000_000_000_001n - 2n * third - last
    expect(answer.body).toMatchObject({
      network: "anvil",
      account: account.native,
      status: "submitted",
      transfers: [
        { asset: zeroAddress, recipient: alice, amount: String(third) },
        { asset: zeroAddress, recipient: bob, amount: String(third) },
        { asset: zeroAddress, recipient: carol, amount: String(last) }
      ],
      totals: [{ asset: zeroAddress, amount: String(2n * third + last) }],
      remainder: [{ asset: zeroAddress, amount: String(remainder) }]
    })
    expect((await mined(answer)).status).toBe("success")
    expect([await balance(alice), await balance(bob), await balance(carol)]).toEqual([third, third, last])
    expect(await balance(account.native)).toBe(100_000_000_000_000_000n + remainder)
  })

  it("pays an ERC-20 plan with approve and disperse in one transaction", async () => {
    const before = [await f.tokenBalance(alice), await f.tokenBalance(bob), await f.tokenBalance(carol)]
    const answer = await disperse("token")
    expect(answer.status).toBe(200)
    const receipt = await mined(answer)
    expect(receipt.status).toBe("success")
    // available = 1_000_000 - 7 = 999_993: 499_996 / 299_997 / 199_998, remainder 2.
    const after = [await f.tokenBalance(alice), await f.tokenBalance(bob), await f.tokenBalance(carol)]
    expect(after.map((value, i) => value - (before[i] ?? 0n))).toEqual([499_996n, 299_997n, 199_998n])
    expect(answer.body.remainder).toEqual([{ asset: f.token, amount: "2" }])
    expect(await f.tokenBalance(account.token)).toBe(9n)
  })

  it("pays an explicit payout of several assets, and refuses one over the balance without moving anything", async () => {
    const dave = freshAddress()
    const refused = await disperse("explicit", {
      assets: [zeroAddress, f.token],
      amounts: ["1000", "501"],
      recipients: [dave, dave]
    })
    expect(refused.status).toBe(422)
    expect(refused.body).toMatchObject({
      code: "insufficient_balance",
      asset: f.token,
      requested: "501",
      available: "500"
    })
    expect(await balance(dave)).toBe(0n)
    const paid = await disperse("explicit", {
      assets: [zeroAddress, f.token],
      amounts: ["1000", "500"],
      recipients: [dave, dave]
    })
    expect(paid.status).toBe(200)
    expect((await mined(paid)).status).toBe("success")
    expect([await balance(dave), await f.tokenBalance(dave)]).toEqual([1000n, 500n])
    expect(paid.body.remainder).toEqual([])
  })

  it("refuses an asset address without contract code as 422 asset_not_a_token, and sends nothing", async () => {
    const dave = freshAddress()
    const notAToken = freshAddress()
    const refused = await disperse("explicit", {
      assets: [zeroAddress, notAToken],
      amounts: ["1000", "1"],
      recipients: [dave, dave]
    })
    expect(refused.status).toBe(422)
    expect(refused.headers.get("retry-after")).toBeNull()
    expect(refused.body).toMatchObject({ code: "asset_not_a_token", asset: notAToken })
    expect(await balance(dave)).toBe(0n)
  })

  it("takes an all-uppercase address as it takes an all-lowercase one", async () => {
    const dave = freshAddress()
    const upper = `0x${dave.slice(2).toUpperCase()}`
    const paid = await disperse("explicit", { assets: [zeroAddress], amounts: ["7"], recipients: [upper] })
    expect(paid.status).toBe(200)
    expect((await mined(paid)).status).toBe("success")
    expect(await balance(dave)).toBe(7n)
  })

  it("runs one payout for 20 concurrent requests without a key; the others find nothing to disperse", async () => {
    const before = await balance(alice)
    const answers = await Promise.all(Array.from({ length: 20 }, () => disperse("race")))
    const ok = answers.filter((answer) => answer.status === 200)
    expect(ok).toHaveLength(1)
    expect(answers.filter((answer) => answer.body.code === "nothing_to_disperse")).toHaveLength(19)
    await mined(ok[0] as (typeof answers)[number])
    expect((await balance(alice)) - before).toBe(12_345n)
  })

  it("answers 20 concurrent requests with one Idempotency-Key with one transaction and 20 identical bodies", async () => {
    const before = await balance(bob)
    const headers = { "x-api-key": keys.main, "idempotency-key": "payout-idem-1" }
    const answers = await Promise.all(Array.from({ length: 20 }, () => disperse("idem", {}, headers)))
    expect(answers.map((answer) => answer.status)).toEqual(new Array(20).fill(200))
    expect(new Set(answers.map((answer) => JSON.stringify(answer.body))).size).toBe(1)
    await mined(answers[0] as (typeof answers)[number])
    expect((await balance(bob)) - before).toBe(999n)
    const reused = await disperse("idem", { assets: [zeroAddress], amounts: ["1"], recipients: [bob] }, headers)
    expect(reused.status).toBe(422)
    expect(reused.body.code).toBe("idempotency_key_reused")
  })

  it("reports the payout's status by id", async () => {
    const answer = await disperse("explicit", { assets: [zeroAddress], amounts: ["5"], recipients: [carol] })
    const receipt = await mined(answer)
    let status = await f.call(
      "GET",
      `/v1/anvil/account/${account.explicit}/payout/${String(answer.body.id)}`,
      undefined,
      {
        "x-api-key": keys.main
      }
    )
    for (let i = 0; i < 50 && status.body.status === "submitted"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      status = await f.call(
        "GET",
        `/v1/anvil/account/${account.explicit}/payout/${String(answer.body.id)}`,
        undefined,
        {
          "x-api-key": keys.main
        }
      )
    }
    expect(status.body).toMatchObject({
      id: answer.body.id,
      status: "confirmed",
      blockNumber: Number(receipt.blockNumber)
    })
    const elsewhere = await f.call(
      "GET",
      `/v1/anvil/account/${account.native}/payout/${String(answer.body.id)}`,
      undefined,
      {
        "x-api-key": keys.main
      }
    )
    expect(elsewhere.body.code).toBe("payout_not_found")
  })

  it("refuses nothing to disperse, no plan, unknown networks and unknown accounts", async () => {
    expect((await disperse("unplanned")).body.code).toBe("no_payout_plan")
    const minimum = await disperse("native")
    expect(minimum.status).toBe(422)
    expect(minimum.body.code).toBe("nothing_to_disperse")
    expect(
      (await f.call("POST", `/v1/mainnet/account/${account.native}/payout/disperse`, {}, { "x-api-key": keys.main }))
        .body.code
    ).toBe("unknown_network")
    // The live account is registered on "live", not on "anvil".
    expect(
      (await f.call("POST", `/v1/anvil/account/${account.live}/payout/disperse`, {}, { "x-api-key": keys.main })).body
        .code
    ).toBe("account_not_found")
  })

  it("enforces every key rule", async () => {
    const cases: Array<[Record<string, string>, number, string]> = [
      [{}, 401, "invalid_api_key"],
      [{ "x-api-key": "wg_live_not-a-real-key-at-all-but-long-enough-000" }, 401, "invalid_api_key"],
      [{ "x-api-key": `${keys.main.slice(0, -1)}${keys.main.endsWith("A") ? "B" : "A"}` }, 401, "invalid_api_key"],
      [{ "x-api-key": keys.revoked }, 401, "invalid_api_key"],
      [{ "x-api-key": keys.otherNetwork }, 403, "forbidden"],
      [{ "x-api-key": keys.otherAccount }, 403, "forbidden"]
    ]
    for (const [headers, status, code] of cases) {
      const answer = await disperse("explicit", { assets: [zeroAddress], amounts: ["1"], recipients: [alice] }, headers)
      expect([answer.status, answer.body.code]).toEqual([status, code])
    }
    // A test key never moves funds on a live network, even one it names.
    const live = await f.call("POST", path("live", "live"), {}, { "x-api-key": keys.testOnLive })
    expect([live.status, live.body.code]).toEqual([403, "forbidden"])
  })

  it("never writes a key to the log", () => {
    expect(lines.length).toBeGreaterThan(20)
    const log = lines.join("\n")
    for (const key of Object.values(keys)) {
      expect(log).not.toContain(key)
      expect(log).not.toContain(key.slice(8))
    }
  })
})
