import { type Address, parseAbiItem, parseEther, zeroAddress } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshAddress } from "../devnet/shared"
import { oneTestKey, startPayoutFixture, testApiKey } from "./fixture"

// Finding 3 of issue 20 on the ERC-4337 pipeline: the paymaster sponsors a payout only within the spend policy
// (a ceiling per payout, a budget per API key), checked before anything is sponsored, signed or sent.
type Fixture = Awaited<ReturnType<typeof startPayoutFixture>>
type Answer = Awaited<ReturnType<Fixture["call"]>>

/** The paymaster's deposit at the EntryPoint: what sponsoring costs the operator. */
const paymasterDeposit = (f: Fixture) =>
  f.devnet.publicClient.readContract({
    address: f.devnet.deployment.contracts.entryPoint,
    abi: [parseAbiItem("function balanceOf(address) view returns (uint256)")],
    functionName: "balanceOf",
    args: [f.devnet.deployment.contracts.verifyingPaymaster]
  })

/** What a payout refused before sponsoring must leave unchanged: the account, the paymaster's deposit, the chain. */
// No block number: the devnet is shared, and an operation of an earlier test may still be mined meanwhile. An
// unchanged deposit shows nothing was sponsored; the balance and code, that the account neither paid nor was deployed.
const chainFacts = async (f: Fixture, account: Address) => ({
  account: await f.balance(account),
  code: await f.devnet.publicClient.getCode({ address: account }),
  deposit: await paymasterDeposit(f)
})

const nativePayout = (recipients: ReadonlyArray<Address>) => ({
  assets: recipients.map(() => zeroAddress),
  amounts: recipients.map(() => "1"),
  recipients,
  unit: "base"
})

describe("the gas a payout's sponsor pays, default limits (anvil + alto)", () => {
  let f: Fixture
  const keys = oneTestKey()
  beforeAll(async () => {
    f = await startPayoutFixture({
      accounts: [{ accountKey: "bulk" }],
      apiKeys: keys.apiKeys
    })
    await f.fund(f.automationAccounts[0]?.address as Address, parseEther("1"))
  })
  afterAll(async () => {
    await f?.stop()
  })

  it("pays 1 wei to each of 255 fresh addresses with the default limits, in several operations each within the ceiling", async () => {
    const account = f.automationAccounts[0]?.address as Address
    const recipients = Array.from({ length: 255 }, () => freshAddress())
    const paid = await f.call("POST", `/v1/anvil/account/${account}/payout/disperse`, nativePayout(recipients), {
      "x-api-key": keys.key()
    })
    expect(paid.status).toBe(200)
    expect((paid.body.operations as ReadonlyArray<unknown>).length).toBeGreaterThan(1)
    expect((await f.final(account, paid.body.id, keys.key())).body.status).toBe("confirmed")
    expect(await f.balance(recipients[0] ?? zeroAddress)).toBe(1n)
    expect(await f.balance(recipients[254] ?? zeroAddress)).toBe(1n)
    expect(await f.balance(account)).toBe(parseEther("1") - 255n)
  })

  it("still runs a 20-recipient payout, sponsored", async () => {
    const account = f.automationAccounts[0]?.address as Address
    const deposit = await paymasterDeposit(f)
    const recipients = Array.from({ length: 20 }, () => freshAddress())
    const paid = await f.call("POST", `/v1/anvil/account/${account}/payout/disperse`, nativePayout(recipients), {
      "x-api-key": keys.key()
    })
    expect(paid.status).toBe(200)
    expect((await f.final(account, paid.body.id, keys.key())).body.status).toBe("confirmed")
    expect(await f.balance(recipients[19] ?? zeroAddress)).toBe(1n)
    expect(await f.balance(account)).toBe(parseEther("1") - 255n - 20n)
    expect(await paymasterDeposit(f)).toBeLessThan(deposit)
  })
})

describe("a payout ceiling and API key budgets (anvil + alto)", () => {
  // A first payout (it deploys the Safe) is sponsored for ~620 000 gas, the next ones of one recipient for ~290 000
  // (their call gas at least their counted gas, 140 000: see partCallGasFloor).
  const spend = { windowSeconds: 604_800, payoutCeiling: 660_000, perApiKey: 1_000_000 }
  let f: Fixture
  const keys: Array<string> = []
  beforeAll(async () => {
    f = await startPayoutFixture({
      spend,
      accounts: [{ accountKey: "first" }, { accountKey: "second" }],
      apiKeys: (accounts) =>
        accounts.map((account) => {
          const made = testApiKey([account.address])
          keys.push(made.key)
          return made.record
        })
    })
    for (const account of f.automationAccounts) await f.fund(account.address as Address, parseEther("1"))
  })
  afterAll(async () => {
    await f?.stop()
  })

  const payout = (index: number, recipients: ReadonlyArray<Address> = [freshAddress()]) =>
    f.call(
      "POST",
      `/v1/anvil/account/${f.automationAccounts[index]?.address}/payout/disperse`,
      nativePayout(recipients),
      { "x-api-key": keys[index] ?? "" }
    )
  const expectExhausted = (answer: Answer) => {
    expect(answer.status).toBe(429)
    expect(answer.body).toMatchObject({ code: "gas_budget_exhausted", budget: "api_key" })
    const retryAfter = Number(answer.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(spend.windowSeconds)
  }

  it("refuses a payout over the network's payout ceiling before it is sponsored", async () => {
    const account = f.automationAccounts[0]?.address as Address
    const before = await chainFacts(f, account)
    const refused = await payout(
      0,
      Array.from({ length: 20 }, () => freshAddress())
    )
    expect(refused.status).toBe(422)
    expect(refused.body).toMatchObject({ code: "gas_ceiling_exceeded", operation: "payout", ceiling: "660000" })
    expect(await chainFacts(f, account)).toEqual(before)
  })

  it("refuses an API key's payouts once its budget is spent, 429 before sponsoring; another key goes on", async () => {
    const account = f.automationAccounts[0]?.address as Address
    let sent = 0
    let refused: Answer | undefined
    for (; sent < 10; sent++) {
      const answer = await payout(0)
      if (answer.status !== 200) {
        refused = answer
        break
      }
      expect((await f.final(account, answer.body.id, keys[0] ?? "")).body.status).toBe("confirmed")
    }
    expect(sent).toBeGreaterThanOrEqual(2)
    expectExhausted(refused as Answer)
    const before = await chainFacts(f, account)
    expectExhausted(await payout(0))
    expect(await chainFacts(f, account)).toEqual(before)
    const other = await payout(1)
    expect(other.status).toBe(200)
    const second = f.automationAccounts[1]?.address as Address
    expect((await f.final(second, other.body.id, keys[1] ?? "")).body.status).toBe("confirmed")
  })
})
