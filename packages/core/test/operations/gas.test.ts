import { hashClientSecret } from "@walletgate/core/auth"
import { testUserIdentity } from "@walletgate/core/operations"
import type { Hex } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { devAccount } from "../devnet/shared"
import { CLIENT, freshAddress, startKernelFixture } from "../kernel/fixture"

// Finding 3 of issue 20: walletgate paid the gas of any batch and any payout, with no ceiling and no budget. The
// payouts' ceiling and API key budgets are tested on the ERC-4337 pipeline in test/payout/spend.test.ts.
type Fixture = Awaited<ReturnType<typeof startKernelFixture>>
type Answer = Awaited<ReturnType<Fixture["call"]>>

const OPERATOR_TOKEN = "operator-token-of-the-spend-tests-0123456789"
const OTHER_APP = { clientId: "wgc_other", clientSecret: "wgs_other_secret" }
/** An app whose operator set a day budget of 700 000 gas: one first batch (~516 000 gas), not two. */
const DAILY_APP = { clientId: "wgc_daily", clientSecret: "wgs_daily_secret" }

/** Precompile 0x05 (modexp) input: a 64-byte base and modulus, a 1024-byte exponent of all ones (~2.2 M gas). */
const MODEXP = "0x0000000000000000000000000000000000000005"
const modexpInput = (): Hex => {
  const word = (n: number) => n.toString(16).padStart(64, "0")
  return `0x${word(64)}${word(1024)}${word(64)}${"03".repeat(64)}${"ff".repeat(1024)}${"07".repeat(64)}`
}

/** The devnet's alto sends bundles from dev accounts 5 to 7: a bundle sent shows in their nonces. */
const bundleSenders = [5, 6, 7].map((index) => devAccount(index).address)

/**
 * What a request that is refused before signing must leave unchanged: the paymaster's deposit (it sponsors the
 * wallets' operations), the nonces of the accounts that send bundles, the chain.
 */
const chainFacts = async (f: Fixture) => ({
  paymasterDeposit: await f.paymasterDeposit(),
  bundleSenderNonces: await Promise.all(
    bundleSenders.map((address) => f.publicClient.getTransactionCount({ address, blockTag: "pending" }))
  ),
  block: await f.publicClient.getBlockNumber()
})

/** The receipt of a payout's transaction, or of the transaction that included a wallet batch once it is final. */
const mined = async (f: Fixture, answer: Answer, headers: Record<string, string> = {}) => {
  const hash =
    answer.body.userOpHash === undefined ? answer.body.txHash : (await f.settled(answer.body.id, headers)).txHash
  return f.publicClient.waitForTransactionReceipt({ hash: hash as Hex })
}

/** The gas the spend policy has reserved on the network in this window, as the operator's health report tells. */
const networkGasUsed = async (f: Fixture): Promise<number> => {
  const health = await f.call("GET", "/v1/health", undefined, { authorization: `Bearer ${OPERATOR_TOKEN}` })
  const [anvil] = health.body.spend as ReadonlyArray<{ readonly networkGasUsed: number }>
  return anvil?.networkGasUsed ?? Number.NaN
}

describe("the gas walletgate pays, default limits, on a real anvil", () => {
  let f: Fixture
  let bearer: Record<string, string>
  beforeAll(async () => {
    f = await startKernelFixture({
      operatorToken: OPERATOR_TOKEN
    })
    bearer = { authorization: `Bearer ${await f.accessToken()}` }
  })
  afterAll(async () => {
    await f?.stop()
  })

  it("refuses a batch of ten modexp calls (~22 M gas) before anything is signed: 422, nothing paid", async () => {
    const before = await chainFacts(f)
    const refused = await f.call(
      "POST",
      "/v1/kernel/tx",
      {
        userId: "phone:modexp",
        chain: "anvil",
        to: Array(10).fill(MODEXP),
        value: Array(10).fill("0"),
        data: Array(10).fill(modexpInput()),
        auth: ""
      },
      bearer
    )
    expect(refused.status).toBe(422)
    expect(refused.headers.get("content-type")).toBe("application/problem+json")
    expect(refused.body).toMatchObject({ code: "gas_ceiling_exceeded", operation: "batch", ceiling: "2000000" })
    expect(BigInt(String(refused.body.gas))).toBeGreaterThan(20_000_000n)
    expect(await chainFacts(f)).toEqual(before)
    // A test-mode app's blank `auth` acts for its own test user: that wallet was never deployed.
    const wallet = await f.walletOf(testUserIdentity(CLIENT.clientId, "phone:modexp"))
    expect(await f.publicClient.getCode({ address: wallet })).toBeUndefined()
  })

  it("still runs an ordinary batch, and counts its gas", async () => {
    const used = await networkGasUsed(f)
    const sent = await f.call(
      "POST",
      "/v1/kernel/tx",
      { userId: "phone:ordinary", chain: "anvil", to: [freshAddress()], value: ["0"], data: ["0x"], auth: "" },
      bearer
    )
    expect(sent.status).toBe(200)
    const receipt = await mined(f, sent, bearer)
    expect(receipt.status).toBe("success")
    // What is reserved is the gas limit signed (the estimate plus 20 %): at least what the transaction used.
    expect(await networkGasUsed(f)).toBeGreaterThan(used + Number(receipt.gasUsed))
  })

  it("shows the spend detail of GET /v1/health to the operator only", async () => {
    const anyone = await f.call("GET", "/v1/health")
    expect(anyone.status).toBe(200)
    expect(Object.keys(anyone.body).sort()).toEqual(["networks", "status"])
    for (const authorization of [
      `Bearer ${OPERATOR_TOKEN}x`,
      `Bearer ${OPERATOR_TOKEN.slice(1)}`,
      `Basic ${OPERATOR_TOKEN}`,
      bearer.authorization ?? ""
    ]) {
      const guessed = await f.call("GET", "/v1/health", undefined, { authorization })
      expect(Object.keys(guessed.body).sort()).toEqual(["networks", "status"])
    }
    const operator = await f.call("GET", "/v1/health", undefined, { authorization: `Bearer ${OPERATOR_TOKEN}` })
    expect(operator.headers.get("cache-control")).toBe("no-store")
    expect(operator.body.networks).toEqual(anyone.body.networks)
    expect((operator.body.spend as ReadonlyArray<unknown>)[0]).toMatchObject({
      network: "anvil",
      limits: { batchCeiling: 2_000_000, payoutCeiling: 5_000_000, perApp: 100_000_000, windowSeconds: 3600 },
      networkGasUsed: expect.any(Number),
      windowEndsAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:00:00\.000Z$/)
    })
  })
})

describe("gas budgets per app and per user, on a real anvil", () => {
  // A first batch from a new wallet (its Safe deployed, the paymaster's validation included) reserves ~516 000 gas,
  // the next ones ~168 000: the sum of the operation's gas limits.
  const spend = {
    windowSeconds: 604_800,
    batchCeiling: 600_000,
    perUser: 1_100_000,
    perApp: 2_800_000,
    payoutCeiling: 300_000,
    perApiKey: 400_000
  }
  let f: Fixture
  let tokens: Record<"main" | "other" | "daily", Record<string, string>>
  beforeAll(async () => {
    f = await startKernelFixture({
      spend,
      operatorToken: OPERATOR_TOKEN,
      apps: [
        {
          clientId: OTHER_APP.clientId,
          secretHash: hashClientSecret(OTHER_APP.clientSecret),
          providers: ["phone"],
          testMode: true
        },
        {
          clientId: DAILY_APP.clientId,
          secretHash: hashClientSecret(DAILY_APP.clientSecret),
          providers: ["phone"],
          testMode: true,
          gasPerDay: 700_000
        }
      ]
    })
    tokens = {
      main: { authorization: `Bearer ${await f.accessToken()}` },
      other: { authorization: `Bearer ${await f.accessToken(OTHER_APP)}` },
      daily: { authorization: `Bearer ${await f.accessToken(DAILY_APP)}` }
    }
  })
  afterAll(async () => {
    await f?.stop()
  })

  const batch = (app: "main" | "other" | "daily", userId: string) =>
    f.call(
      "POST",
      "/v1/kernel/tx",
      { userId, chain: "anvil", to: [freshAddress()], value: ["0"], data: ["0x"], auth: "" },
      tokens[app]
    )

  /** Sends batches (each final before the next) until one is refused; fails after `most`. */
  const untilRefused = async (send: () => Promise<Answer>, most: number, headers: Record<string, string> = {}) => {
    for (let sent = 0; sent < most; sent++) {
      const answer = await send()
      if (answer.status !== 200) return { refused: answer, sent }
      await mined(f, answer, headers)
    }
    throw new Error(`no refusal after ${most} requests`)
  }

  const expectExhausted = (answer: Answer, budget: string) => {
    expect(answer.status).toBe(429)
    expect(answer.body).toMatchObject({ code: "gas_budget_exhausted", budget })
    const retryAfter = Number(answer.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(spend.windowSeconds)
  }

  it("refuses a user's batches once their budget is spent, 429 before signing; another user goes on", async () => {
    const { refused, sent } = await untilRefused(() => batch("main", "phone:alice"), 10, tokens.main)
    // 516 k + 3 × 168 k fit in 1 100 k; the fifth does not.
    expect(sent).toBe(4)
    expectExhausted(refused, "user")
    const before = await chainFacts(f)
    expectExhausted(await batch("main", "phone:alice"), "user")
    expect(await chainFacts(f)).toEqual(before)
    const bob = await batch("main", "phone:bob")
    expect(bob.status).toBe(200)
    await mined(f, bob, tokens.main)
  })

  it("refuses an app's batches once its budget is spent; another app, even for the same user id, goes on", async () => {
    // alice (~1 020 k) and bob (~516 k) spent ~1 536 k of the app's 2 800 k: two more new users fit, not a third.
    const { refused, sent } = await untilRefused(
      () => batch("main", `phone:new-${crypto.randomUUID()}`),
      5,
      tokens.main
    )
    expect(sent).toBe(2)
    expectExhausted(refused, "app")
    const before = await chainFacts(f)
    expectExhausted(await batch("main", "phone:carol"), "app")
    expect(await chainFacts(f)).toEqual(before)
    // The other app's budget and its alice's are its own: this app's users cannot spend them.
    const other = await batch("other", "phone:alice")
    expect(other.status).toBe(200)
    expect((await mined(f, other, tokens.other)).status).toBe("success")
  })

  it("lets no more than the app's budget through when its users' batches arrive all at once", async () => {
    // The other app has spent ~536 k; eight new users at once, ~536 k each: four fit in what is left, four do not.
    const used = await networkGasUsed(f)
    const answers = await Promise.all(Array.from({ length: 8 }, (_, index) => batch("other", `phone:rush-${index}`)))
    const statuses = answers.map((answer) => answer.status).sort()
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429, 429, 429])
    for (const answer of answers.filter((a) => a.status === 429)) expectExhausted(answer, "app")
    await Promise.all(answers.filter((answer) => answer.status === 200).map((answer) => mined(f, answer, tokens.other)))
    expect(await networkGasUsed(f)).toBeLessThan(used + 4 * 540_000)
  })

  it("refuses an app's batches past the day budget its operator set (429 app_day) before signing", async () => {
    const first = await batch("daily", "phone:day-1")
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    await mined(f, first, tokens.daily)
    const before = await chainFacts(f)
    const refused = await batch("daily", "phone:day-2")
    expectExhausted(refused, "app_day")
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(86_400)
    expect(await chainFacts(f)).toEqual(before)
  })
})
