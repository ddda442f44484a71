import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { SecureRandom } from "@walletgate/core"
import { makeApiKey, type NewApiKey } from "@walletgate/core/payout"
import { Effect, Logger } from "effect"
import {
  type Address,
  encodeErrorResult,
  formatEther,
  getAddress,
  type Hex,
  parseAbi,
  parseEther,
  size,
  zeroAddress
} from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Bundler, makeJsonRpcBundler } from "../../src/operations/Bundler"
import { prepareSafeOperation } from "../../src/operations/safeOperation"
import { automationSafe } from "../../src/payout/accounts"
import { freshAddress } from "../devnet/shared"
import { asHash, automationAddress, startPayoutFixture } from "./fixture"

type Fixture = Awaited<ReturnType<typeof startPayoutFixture>>
type Answer = Awaited<ReturnType<Fixture["call"]>>
type AccountName =
  | "native"
  | "token"
  | "explicit"
  | "race"
  | "idem"
  | "unplanned"
  | "live"
  | "shared"
  | "gas"
  | "automate"
const NAMES: ReadonlyArray<AccountName> = [
  "native",
  "token",
  "explicit",
  "race",
  "idem",
  "unplanned",
  "live",
  "shared",
  "gas",
  "automate"
]
// The customer's own key: the second owner of the "shared" account's Safe.
const customer = privateKeyToAccount("0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba")

/**
 * Runtime code that answers every call by reverting with EIP-3668's `OffchainLookup(address(this), urls, …)`: what a
 * contract does to make a CCIP-read client fetch its URLs (the sender word is written in at run time: ADDRESS).
 */
const offchainLookupCode = (urls: ReadonlyArray<string>): Hex => {
  const revert = encodeErrorResult({
    abi: parseAbi([
      "error OffchainLookup(address sender, string[] urls, bytes callData, bytes4 callbackFunction, bytes extraData)"
    ]),
    errorName: "OffchainLookup",
    args: [zeroAddress, urls, "0x1234", "0x12345678", "0x"]
  })
  const length = size(revert).toString(16).padStart(4, "0")
  // CODECOPY the revert data (after this 18-byte prefix) to memory 0; MSTORE ADDRESS at 4 (the sender word); REVERT.
  return `0x61${length}60126000393060045261${length}6000fd${revert.slice(2)}`
}

const newKey = (options: NewApiKey) => Effect.runSync(makeApiKey(options).pipe(Effect.provide(SecureRandom.crypto)))
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("payouts as user operations from automation Safes (anvil + alto)", () => {
  let f: Fixture
  const [alice, bob, carol] = [freshAddress(), freshAddress(), freshAddress()].map((one) => getAddress(one)) as [
    Address,
    Address,
    Address
  ]
  const lines: Array<string> = []
  const account = {} as Record<AccountName, Address>
  const keys = {} as Record<"main" | "revoked" | "otherNetwork" | "otherAccount" | "testOnLive" | "gas", string>
  const solePlan = (recipient: Address) => () => ({
    asset: zeroAddress,
    recipients: [{ address: recipient, shareBps: 10_000 }],
    minimumPayout: "1",
    reserve: "0"
  })

  beforeAll(async () => {
    f = await startPayoutFixture({
      loggers: [Logger.map(Logger.formatJson, (line) => void lines.push(line))],
      accounts: [
        // A third each in basis points (3333 + 3333 + 3334): flooring leaves a remainder.
        {
          accountKey: "native",
          plan: () => ({
            asset: zeroAddress,
            recipients: [
              { address: alice, shareBps: 3333 },
              { address: bob, shareBps: 3333 },
              { address: carol, shareBps: 3334 }
            ],
            minimumPayout: "1000",
            reserve: "100000000000000000"
          })
        },
        {
          accountKey: "token",
          plan: (token) => ({
            asset: token,
            recipients: [
              { address: alice, shareBps: 5000 },
              { address: bob, shareBps: 3000 },
              { address: carol, shareBps: 2000 }
            ],
            minimumPayout: "1",
            reserve: "7"
          })
        },
        { accountKey: "explicit" },
        { accountKey: "race", plan: solePlan(alice) },
        { accountKey: "idem", plan: solePlan(bob) },
        { accountKey: "unplanned" },
        { accountKey: "live", network: "live" },
        { accountKey: "shared", coOwner: customer.address, plan: solePlan(carol) },
        { accountKey: "gas" },
        { accountKey: "automate" }
      ],
      apiKeys: (accounts) => {
        const mine = accounts.filter((a) => a.network === "anvil").map((a) => a.address)
        const live = accounts.filter((a) => a.network === "live").map((a) => a.address)
        const made = {
          main: newKey({ mode: "live", networks: ["anvil", "live"], accounts: [...mine, ...live] }),
          revoked: newKey({ mode: "live", networks: ["anvil"], accounts: mine }),
          otherNetwork: newKey({ mode: "live", networks: ["live"], accounts: mine }),
          otherAccount: newKey({ mode: "live", networks: ["anvil"], accounts: [freshAddress()] }),
          testOnLive: newKey({ mode: "test", networks: ["anvil", "live"], accounts: live }),
          // The gas figures' payouts of 50 recipients reserve ≈ 2.5 M each: a budget of their own.
          gas: newKey({ mode: "test", networks: ["anvil"], accounts: mine })
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
    await f.fund(account.idem, 999n)
    await f.fund(account.shared, parseEther("1"))
    await f.fund(account.gas, parseEther("1"), 10_000_000n)
    await f.fund(account.automate, parseEther("2"), 1_000_000_000n)
  })
  afterAll(async () => {
    await f?.stop()
  })

  const path = (name: AccountName, network = "anvil") => `/v1/${network}/account/${account[name]}/payout/disperse`
  const disperse = (
    name: AccountName,
    body: unknown = {},
    headers: Record<string, string> = { "x-api-key": keys.main }
  ) => f.call("POST", path(name), body, headers)
  const final = (name: AccountName, answer: Answer, key = keys.main) => f.final(account[name], answer.body.id, key)

  it("pays the native balance less the reserve by shares from a new Safe, sponsored: the Safe pays no gas", async () => {
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
      userOpHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      transfers: [
        { asset: zeroAddress, recipient: alice, amount: String(third) },
        { asset: zeroAddress, recipient: bob, amount: String(third) },
        { asset: zeroAddress, recipient: carol, amount: String(last) }
      ],
      totals: [{ asset: zeroAddress, amount: String(2n * third + last) }],
      remainder: [{ asset: zeroAddress, amount: String(remainder) }]
    })
    expect((await final("native", answer)).body).toMatchObject({
      status: "confirmed",
      userOpHash: answer.body.userOpHash
    })
    expect([await f.balance(alice), await f.balance(bob), await f.balance(carol)]).toEqual([third, third, last])
    expect(await f.balance(account.native)).toBe(100_000_000_000_000_000n + remainder)
    expect(await f.devnet.publicClient.getCode({ address: account.native })).toMatch(/^0x.+/)
  })

  it("pays an ERC-20 plan with one transfer per recipient in one operation", async () => {
    const before = [await f.tokenBalance(alice), await f.tokenBalance(bob), await f.tokenBalance(carol)]
    const answer = await disperse("token")
    expect(answer.status).toBe(200)
    expect((await final("token", answer)).body.status).toBe("confirmed")
    // available = 1_000_000 - 7 = 999_993: 499_996 / 299_997 / 199_998, remainder 2.
    const after = [await f.tokenBalance(alice), await f.tokenBalance(bob), await f.tokenBalance(carol)]
    expect(after.map((value, i) => value - (before[i] ?? 0n))).toEqual([499_996n, 299_997n, 199_998n])
    expect(answer.body.remainder).toEqual([{ asset: f.token, amount: "2", decimals: 6, tokenAmount: "0.000002" }])
    expect(await f.tokenBalance(account.token)).toBe(9n)
    expect(await f.executed(account.token)).toHaveLength(1)
  })

  it("pays an explicit payout of several assets atomically, and refuses one over the balance without moving anything", async () => {
    const dave = freshAddress()
    const refused = await disperse("explicit", {
      assets: [zeroAddress, f.token],
      amounts: ["1000", "501"],
      recipients: [dave, dave],
      unit: "base"
    })
    expect(refused.status).toBe(422)
    expect(refused.body).toMatchObject({
      code: "insufficient_balance",
      asset: f.token,
      requested: "501",
      available: "500"
    })
    expect(await f.balance(dave)).toBe(0n)
    const paid = await disperse("explicit", {
      assets: [zeroAddress, f.token],
      amounts: ["1000", "500"],
      recipients: [dave, dave],
      unit: "base"
    })
    expect(paid.status).toBe(200)
    expect((await final("explicit", paid)).body.status).toBe("confirmed")
    expect([await f.balance(dave), await f.tokenBalance(dave)]).toEqual([1000n, 500n])
    expect(paid.body.remainder).toEqual([])
  })

  it("refuses an asset address without contract code as 422 asset_not_a_token, and sends nothing", async () => {
    const dave = getAddress(freshAddress())
    const notAToken = getAddress(freshAddress())
    const refused = await disperse("explicit", {
      assets: [zeroAddress, notAToken],
      amounts: ["1000", "1"],
      recipients: [dave, dave],
      unit: "base"
    })
    expect(refused.status).toBe(422)
    expect(refused.headers.get("retry-after")).toBeNull()
    expect(refused.body).toMatchObject({ code: "asset_not_a_token", asset: notAToken })
    expect(await f.balance(dave)).toBe(0n)
  })

  it("never fetches a URL a token names (EIP-3668 CCIP read): a token reverting with OffchainLookup is refused, its URL never asked", async () => {
    const asked: Array<string> = []
    const gateway = createServer((request, response) => {
      asked.push(`${request.method} ${request.url}`)
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data: "0x" }))
    })
    await new Promise<void>((resolve) => gateway.listen(0, "127.0.0.1", resolve))
    try {
      const { port } = gateway.address() as AddressInfo
      const token = getAddress(freshAddress())
      await f.devnet.anvilRequest("anvil_setCode", [
        token,
        offchainLookupCode([`http://127.0.0.1:${port}/{sender}/{data}`, `http://127.0.0.1:${port}/`])
      ])
      const dave = getAddress(freshAddress())
      // In base units its balance is read (the revert reads as a node failure); in tokens its decimals are (none).
      const expected = { base: [503, "upstream_unavailable"], token: [422, "asset_decimals_unknown"] } as const
      for (const [unit, [status, code]] of Object.entries(expected)) {
        const refused = await disperse("explicit", { assets: [token], amounts: ["1"], recipients: [dave], unit })
        expect([refused.status, refused.body.code]).toEqual([status, code])
      }
      expect(asked).toEqual([])
    } finally {
      await new Promise((resolve) => gateway.close(resolve))
    }
  })

  it("takes an all-uppercase address as it takes an all-lowercase one", async () => {
    const dave = freshAddress()
    const upper = `0x${dave.slice(2).toUpperCase()}`
    const paid = await disperse("explicit", {
      assets: [zeroAddress],
      amounts: ["7"],
      recipients: [upper],
      unit: "base"
    })
    expect(paid.status).toBe(200)
    expect((await final("explicit", paid)).body.status).toBe("confirmed")
    expect(await f.balance(dave)).toBe(7n)
  })

  it("executes one of 20 concurrent plan payouts, 20 rounds in a row: the losers are told 409 or the payout that ran (one, readable), never 503", async () => {
    for (let index = 0; index < 20; index++) {
      const amount = 12_345n + BigInt(index)
      await f.fund(account.race, amount)
      const before = await f.balance(alice)
      // Together, or arriving 10–30 ms apart: a late one may read the balance before the winner lands and simulate
      // after it (a node error for want of funds, once answered 503). The first round deploys the Safe.
      const spacing = (index % 4) * 10
      const answers = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          await wait(spacing * i)
          return disperse("race")
        })
      )
      // The others find their turn taken (409) or, once the winner landed, nothing left (422): nothing sent.
      for (const answer of answers.filter((a) => a.status !== 200)) {
        expect([
          [409, "payout_in_progress"],
          [422, "nothing_to_disperse"]
        ]).toContainEqual([answer.status, answer.body.code])
      }
      // Requests that signed the same operation (same nonce, balance, gas and fees) share its one record: every 200 of
      // a round names that one payout, and reading it finds it (a record answered and then discarded read as 404).
      const accepted = answers.filter((a) => a.status === 200)
      expect(accepted.length).toBeGreaterThan(0)
      expect(new Set(accepted.map((a) => a.body.id)).size).toBe(1)
      const payout = `/v1/anvil/account/${account.race}/payout/${String(accepted[0]?.body.id)}`
      const read = await f.call("GET", payout, undefined, { "x-api-key": keys.main })
      expect([read.status, read.body.userOpHash]).toEqual([200, accepted[0]?.body.userOpHash])
      const deadline = Date.now() + 20_000
      while ((await f.balance(alice)) - before < amount && Date.now() < deadline) await wait(50)
      expect((await f.balance(alice)) - before).toBe(amount)
      expect(await f.balance(account.race)).toBe(0n)
    }
    // One operation per round; the EntryPoint executed no other.
    expect(await f.executed(account.race)).toHaveLength(20)
  }, 120_000)

  it("answers 20 concurrent requests with one Idempotency-Key with one operation and 20 identical bodies", async () => {
    const before = await f.balance(bob)
    const headers = { "x-api-key": keys.main, "idempotency-key": "payout-idem-1" }
    const answers = await Promise.all(Array.from({ length: 20 }, () => disperse("idem", {}, headers)))
    expect(answers.map((answer) => answer.status)).toEqual(new Array(20).fill(200))
    expect(new Set(answers.map((answer) => JSON.stringify(answer.body))).size).toBe(1)
    expect((await final("idem", answers[0] as Answer)).body.status).toBe("confirmed")
    expect((await f.balance(bob)) - before).toBe(999n)
    // Replayed after it landed: the same payout, nothing sent.
    const replay = await disperse("idem", {}, headers)
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    expect(replay.body.userOpHash).toBe(answers[0]?.body.userOpHash)
    const reused = await disperse(
      "idem",
      { assets: [zeroAddress], amounts: ["1"], recipients: [bob], unit: "base" },
      headers
    )
    expect([reused.status, reused.body.code]).toEqual([422, "idempotency_key_reused"])
    expect((await f.balance(bob)) - before).toBe(999n)
    expect(await f.executed(account.idem)).toHaveLength(1)
  })

  it("reads the payout's status when asked, confirmed on the node; another account's path or key does not find it", async () => {
    const answer = await disperse("explicit", {
      assets: [zeroAddress],
      amounts: ["5"],
      recipients: [carol],
      unit: "base"
    })
    expect(answer.body.txHash).toBeUndefined()
    const status = await final("explicit", answer)
    const receipt = await f.devnet.publicClient.getTransactionReceipt({ hash: asHash(status.body.txHash) })
    expect(status.body).toMatchObject({
      id: answer.body.id,
      userOpHash: answer.body.userOpHash,
      status: "confirmed",
      blockNumber: Number(receipt.blockNumber),
      gasUsed: expect.stringMatching(/^\d+$/)
    })
    const read = (name: AccountName, key: string, network = "anvil") =>
      f.call("GET", `/v1/${network}/account/${account[name]}/payout/${String(answer.body.id)}`, undefined, {
        "x-api-key": key
      })
    expect((await read("native", keys.main)).body.code).toBe("payout_not_found")
    expect((await read("explicit", keys.main, "live")).body.code).toBe("payout_not_found")
    expect((await read("explicit", keys.otherAccount)).status).toBe(403)
    expect((await read("explicit", keys.otherNetwork)).status).toBe(403)
  })

  it("refuses nothing to disperse, no plan, unknown networks and unknown accounts", async () => {
    expect((await disperse("unplanned")).body.code).toBe("no_payout_plan")
    const minimum = await disperse("native")
    expect([minimum.status, minimum.body.code]).toEqual([422, "nothing_to_disperse"])
    // In base units and in whole tokens, as the payout answer gives amounts (the plan's minimum is 1000 wei).
    const available = String(minimum.body.available)
    expect(minimum.body).toMatchObject({
      asset: zeroAddress,
      available: expect.stringMatching(/^\d+$/),
      minimum: "1000",
      decimals: 18,
      availableTokenAmount: formatEther(BigInt(available)),
      minimumTokenAmount: "0.000000000000001"
    })
    expect(minimum.body.detail).toContain(
      `${formatEther(BigInt(available))} of ${zeroAddress} (${available} base units)`
    )
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
    const before = await f.balance(alice)
    for (const [headers, status, code] of cases) {
      const answer = await disperse(
        "explicit",
        { assets: [zeroAddress], amounts: ["1"], recipients: [alice], unit: "base" },
        headers
      )
      expect([answer.status, answer.body.code]).toEqual([status, code])
    }
    // A test key never moves funds on a live network, even one it names.
    const live = await f.call("POST", path("live", "live"), {}, { "x-api-key": keys.testOnLive })
    expect([live.status, live.body.code]).toEqual([403, "forbidden"])
    expect(await f.balance(alice)).toBe(before)
  })

  it("runs a payout from a Safe that also has the customer's key as an owner; that key alone can move the funds too", async () => {
    // The co-owner is part of the address: the Safe of the name alone is another account.
    expect(automationAddress(f.masterSecret, "shared")).not.toBe(account.shared)
    const before = await f.balance(carol)
    const answer = await disperse("shared")
    expect(answer.status).toBe(200)
    expect((await final("shared", answer)).body.status).toBe("confirmed")
    expect((await f.balance(carol)) - before).toBe(parseEther("1"))
    const owners = await f.devnet.publicClient.readContract({
      address: account.shared,
      abi: parseAbi([
        "function getOwners() view returns (address[])",
        "function getThreshold() view returns (uint256)"
      ]),
      functionName: "getOwners"
    })
    expect(owners.map((owner) => getAddress(owner))).toContain(customer.address)
    expect(owners).toHaveLength(2)

    // The customer signs an operation alone (sponsored by the devnet's paymaster) and sends it to the bundler.
    await f.fund(account.shared, 777n)
    const eve = freshAddress()
    const gatewayOwner = owners.map((owner) => getAddress(owner)).find((owner) => owner !== customer.address)
    const customerSafe = automationSafe(gatewayOwner ?? zeroAddress, {
      accountKey: "shared",
      coOwner: customer.address
    })
    expect(customerSafe.address).toBe(account.shared)
    const bundler = makeJsonRpcBundler([{ chainId: f.devnet.chain.id, url: f.devnet.bundlerUrl }])
    const block = await f.devnet.publicClient.getBlock()
    const prepared = await Effect.runPromise(
      prepareSafeOperation({
        chainId: f.devnet.chain.id,
        account: customerSafe,
        calls: [{ to: eve, value: 777n, data: "0x" }],
        deployed: true,
        fees: { maxFeePerGas: (block.baseFeePerGas ?? 0n) * 2n + 1_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n },
        signers: [customer],
        sponsor: {
          paymaster: f.devnet.deployment.contracts.verifyingPaymaster,
          signer: f.devnet.paymasterSigner,
          window: { validUntil: 0, validAfter: 0 }
        }
      }).pipe(Effect.provideService(Bundler, bundler))
    )
    await Effect.runPromise(
      bundler.sendUserOperation(f.devnet.chain.id, prepared.op, customerSafe.contracts.entryPoint)
    )
    const deadline = Date.now() + 20_000
    while ((await f.balance(eve)) === 0n && Date.now() < deadline) await wait(50)
    expect(await f.balance(eve)).toBe(777n)
  })

  it("prints the gas of payouts of n recipients (native, token) from a deployed Safe", async () => {
    const figures: Array<string> = []
    // The first operation deploys the Safe.
    const gasKey = { "x-api-key": keys.gas }
    const first = await disperse(
      "gas",
      { assets: [zeroAddress], amounts: ["1"], recipients: [freshAddress()], unit: "base" },
      gasKey
    )
    figures.push(`1 native recipient, Safe deployed by it: ${(await final("gas", first, keys.gas)).body.gasUsed} gas`)
    for (const [n, asset] of [
      [1, zeroAddress],
      [3, zeroAddress],
      [20, zeroAddress],
      [50, zeroAddress],
      [1, "token"],
      [20, "token"],
      [50, "token"]
    ] as const) {
      const recipients = Array.from({ length: n }, () => freshAddress())
      const assetOf = asset === "token" ? f.token : zeroAddress
      const answer = await disperse(
        "gas",
        {
          assets: recipients.map(() => assetOf),
          amounts: recipients.map(() => "1"),
          recipients,
          unit: "base"
        },
        gasKey
      )
      expect(answer.status).toBe(200)
      const done = await final("gas", answer, keys.gas)
      expect(done.body.status).toBe("confirmed")
      figures.push(`${n} ${asset === "token" ? "ERC-20" : "native"} recipients: ${done.body.gasUsed} gas`)
    }
    console.info(`payout gas (sponsored user operation, fresh recipients):\n  ${figures.join("\n  ")}`)
  })

  it("reads the docs' quick-start amounts as whole tokens: 100 of a 6-decimal token pays 100,000,000 base units; ETH likewise", async () => {
    const [dave, erin] = [freshAddress(), freshAddress()]
    const answer = await disperse("automate", {
      assets: [f.token, zeroAddress],
      amounts: ["100", "0.25"],
      recipients: [dave, erin]
    })
    expect(answer.status).toBe(200)
    // The docs' fields: hash (the operation's, which GET /v1/:network/tx/:hash finds) and meta.status.
    expect(answer.body).toMatchObject({
      hash: answer.body.userOpHash,
      meta: { status: "pending" },
      status: "submitted"
    })
    expect(answer.body.transfers).toEqual([
      { asset: f.token, recipient: getAddress(dave), amount: "100000000", decimals: 6, tokenAmount: "100" },
      {
        asset: zeroAddress,
        recipient: getAddress(erin),
        amount: "250000000000000000",
        decimals: 18,
        tokenAmount: "0.25"
      }
    ])
    const done = await final("automate", answer)
    expect(done.body).toMatchObject({ status: "confirmed", meta: { status: "paid" } })
    expect([await f.tokenBalance(dave), await f.balance(erin)]).toEqual([100_000_000n, parseEther("0.25")])
  })

  it("refuses an amount finer than the token (400 amount_precision) and pays base units only when unit is base", async () => {
    const dave = freshAddress()
    const finer = await disperse("automate", { assets: [f.token], amounts: ["100.0000001"], recipients: [dave] })
    expect(finer).toMatchObject({
      status: 400,
      body: {
        code: "amount_precision",
        errors: [{ path: "/amounts/0", message: "Expected at most 6 fractional digits" }]
      }
    })
    const finerEth = await disperse("automate", {
      assets: [zeroAddress],
      amounts: ["0.0000000000000000001"],
      recipients: [dave]
    })
    expect([finerEth.status, finerEth.body.code]).toEqual([400, "amount_precision"])
    const fractionalBase = await disperse("automate", {
      assets: [f.token],
      amounts: ["1.5"],
      recipients: [dave],
      unit: "base"
    })
    expect([fractionalBase.status, fractionalBase.body.code]).toEqual([400, "amount_precision"])
    for (const amount of ["0", "0.000", "1e6", "-1", "01", ".5", "", "1."]) {
      const refused = await disperse("automate", { assets: [f.token], amounts: [amount], recipients: [dave] })
      expect([amount, refused.status, refused.body.code]).toEqual([amount, 400, "invalid_request"])
    }
    const unknownField = await disperse("automate", {
      assets: [f.token],
      amounts: ["1"],
      recipients: [dave],
      decimals: 0
    })
    expect([unknownField.status, unknownField.body.code]).toEqual([400, "invalid_request"])
    expect(await f.tokenBalance(dave)).toBe(0n)
    // Trailing zeros change no value: accepted. unit base: base units as given.
    const base = await disperse("automate", {
      assets: [f.token, f.token],
      amounts: ["100", "1.500000000"],
      recipients: [dave, dave],
      unit: "base"
    })
    expect([base.status, base.body.code]).toEqual([400, "amount_precision"])
    const paid = await disperse("automate", {
      assets: [f.token, f.token],
      amounts: ["100", "1.500000000"],
      recipients: [dave, dave]
    })
    expect(paid.status).toBe(200)
    expect((await final("automate", paid)).body.status).toBe("confirmed")
    const inBase = await disperse("automate", { assets: [f.token], amounts: ["100"], recipients: [dave], unit: "base" })
    expect(inBase.status).toBe(200)
    expect((await final("automate", inBase)).body.status).toBe("confirmed")
    expect(await f.tokenBalance(dave)).toBe(101_500_000n + 100n)
  })

  it("finds a payout by its hash on GET /v1/:network/tx/:hash, under any name of the chain; never with another key's", async () => {
    const dave = freshAddress()
    const answer = await disperse("automate", { assets: [f.token], amounts: ["1"], recipients: [dave] })
    const done = await final("automate", answer)
    const byHash = (hash: unknown, key = keys.main, network = "anvil") =>
      f.call("GET", `/v1/${network}/tx/${String(hash)}`, undefined, { "x-api-key": key })
    for (const network of ["anvil", "31337"]) {
      const found = await byHash(answer.body.hash, keys.main, network)
      expect(found).toMatchObject({
        status: 200,
        body: { id: answer.body.id, hash: answer.body.userOpHash, meta: { status: "paid" }, txHash: done.body.txHash }
      })
    }
    // By the including transaction's hash too, in any case.
    expect((await byHash(String(done.body.txHash).toUpperCase().replace("0X", "0x"))).body.id).toBe(answer.body.id)
    // Another tenant's key (it covers another account): as for a hash nobody sent.
    expect(await byHash(answer.body.hash, keys.otherAccount)).toMatchObject({
      status: 404,
      body: { code: "payout_not_found" }
    })
    expect(await byHash(`0x${"ab".repeat(32)}`)).toMatchObject({ status: 404, body: { code: "payout_not_found" } })
    // Another network's path, and a key of another network.
    expect((await byHash(answer.body.hash, keys.main, "live")).body.code).toBe("payout_not_found")
    expect((await byHash(answer.body.hash, keys.otherNetwork)).status).toBe(403)
    expect((await byHash(answer.body.hash, "wg_live_not-a-real-key-at-all-but-long-enough-000")).status).toBe(401)
    expect((await byHash("0x1234")).body.code).toBe("invalid_request")
  })

  it("pays one asset to one recipient on POST …/payout/transfer, exactly once per Idempotency-Key", async () => {
    const dave = freshAddress()
    const transfer = (body: unknown, headers: Record<string, string>) =>
      f.call("POST", `/v1/anvil/account/${account.automate}/payout/transfer`, body, headers)
    const body = { asset: f.token, amount: "2.5", recipient: dave }
    const headers = { "x-api-key": keys.main, "idempotency-key": "transfer-1" }
    // Another tenant's key, a key of another network: refused, nothing paid.
    expect((await transfer(body, { ...headers, "x-api-key": keys.otherAccount })).status).toBe(403)
    expect((await transfer(body, { ...headers, "x-api-key": keys.otherNetwork })).status).toBe(403)
    const answers = await Promise.all(Array.from({ length: 5 }, () => transfer(body, headers)))
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200])
    expect(new Set(answers.map((answer) => answer.body.userOpHash)).size).toBe(1)
    expect(answers[0]?.body.transfers).toEqual([
      { asset: f.token, recipient: getAddress(dave), amount: "2500000", decimals: 6, tokenAmount: "2.5" }
    ])
    expect((await final("automate", answers[0] as Answer)).body.status).toBe("confirmed")
    // Replayed after it landed: the same payout, nothing sent.
    const replay = await transfer(body, headers)
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    expect(replay.body.userOpHash).toBe(answers[0]?.body.userOpHash)
    // The key with another body, or on disperse: refused.
    expect((await transfer({ ...body, amount: "3" }, headers)).body.code).toBe("idempotency_key_reused")
    expect(
      (await disperse("automate", { assets: [f.token], amounts: ["2.5"], recipients: [dave] }, headers)).body.code
    ).toBe("idempotency_key_reused")
    await wait(300)
    expect(await f.tokenBalance(dave)).toBe(2_500_000n)
    // unit base, the native coin, and the refusals of a body.
    const erin = freshAddress()
    const native = await transfer(
      { asset: zeroAddress, amount: "7", recipient: erin, unit: "base" },
      { "x-api-key": keys.main }
    )
    expect((await final("automate", native)).body.status).toBe("confirmed")
    expect(await f.balance(erin)).toBe(7n)
    expect((await transfer({ ...body, amount: "0.0000001" }, { "x-api-key": keys.main })).body.code).toBe(
      "amount_precision"
    )
    expect((await transfer({ ...body, amounts: ["1"] }, { "x-api-key": keys.main })).body.code).toBe("invalid_request")
    expect((await transfer({ asset: f.token, recipient: dave }, { "x-api-key": keys.main })).body.code).toBe(
      "invalid_request"
    )
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
