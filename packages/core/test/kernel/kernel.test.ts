import { testTokenArtifact } from "@walletgate/core/devnet"
import { Bundler, makeJsonRpcBundler, testUserIdentity } from "@walletgate/core/operations"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { encodeErrorResult, encodeFunctionData, type Hash, parseAbi, parseEther } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { userOperationEvents } from "../devnet/shared"
import { CLIENT, freshAddress, startKernelFixture } from "./fixture"

type Fixture = Awaited<ReturnType<typeof startKernelFixture>>

describe("POST /v1/kernel/tx on the ERC-4337 pipeline (anvil + alto)", { tags: ["devnet"] }, () => {
  let f: Fixture
  let bearer: Record<string, string>
  let user: Awaited<ReturnType<Fixture["phoneUser"]>>
  beforeAll(async () => {
    f = await startKernelFixture()
    bearer = { authorization: `Bearer ${await f.accessToken()}` }
    user = await f.phoneUser()
  })
  afterAll(async () => {
    await f.stop()
  })

  const transfer = (to: string, amount: bigint) =>
    encodeFunctionData({ abi: testTokenArtifact.abi, functionName: "transfer", args: [to as `0x${string}`, amount] })

  /** How many times the EntryPoint executed the operation `userOpHash`. */
  const executions = async (userOpHash: unknown) =>
    (await userOperationEvents(f.local, { userOpHash: userOpHash as Hash })).length

  it("deploys a new user's Safe and runs an ETH and two ERC-20 transfers atomically; the paymaster pays", async () => {
    const wallet = await f.walletOf(user.identity)
    expect(await f.publicClient.getCode({ address: wallet })).toBeUndefined()
    await f.fund(wallet, parseEther("1"), 5_000_000n)
    const [alice, bob, carol] = [freshAddress(), freshAddress(), freshAddress()]
    const deposit = await f.paymasterDeposit()
    const sent = await f.call(
      "POST",
      "/v1/kernel/tx",
      {
        userId: user.userId,
        chain: "anvil",
        to: [alice, f.token, f.token],
        value: ["250000000000000000", "0", "0"],
        data: ["0x", transfer(bob, 1_500_000n), transfer(carol, 500_000n)],
        auth: user.jwt
      },
      bearer
    )
    expect(sent.status).toBe(200)
    // Answered as soon as the bundler has it: its hash, not yet a transaction.
    expect(sent.body).toMatchObject({ userId: user.userId, chain: "anvil", account: wallet, status: "submitted" })
    expect(sent.body.userOpHash).toMatch(/^0x[0-9a-f]{64}$/)
    const final = await f.settled(sent.body.id, bearer)
    expect(final).toMatchObject({ id: sent.body.id, userOpHash: sent.body.userOpHash, status: "confirmed" })
    const receipt = await f.publicClient.getTransactionReceipt({ hash: final.txHash as Hash })
    expect(receipt.status).toBe("success")
    expect(final.blockNumber).toBe(Number(receipt.blockNumber))
    expect(await f.publicClient.getBalance({ address: alice })).toBe(parseEther("0.25"))
    expect([await f.tokenBalance(bob), await f.tokenBalance(carol), await f.tokenBalance(wallet)]).toEqual([
      1_500_000n,
      500_000n,
      3_000_000n
    ])
    // The Safe paid nothing for gas: the paymaster's deposit did.
    expect(await f.publicClient.getBalance({ address: wallet })).toBe(parseEther("0.75"))
    expect(await f.paymasterDeposit()).toBeLessThan(deposit)
    // A Safe proxy's runtime code: it delegates every call to the singleton it stores.
    expect(await f.publicClient.getCode({ address: wallet })).toMatch(/^0x608060405273f{40}600054167fa619486e/)
    console.info(`3-call batch with the Safe's deployment: ${String(final.gasUsed)} gas (operation)`)

    // A second 3-call batch from the deployed Safe, waited for inside the request (?wait=10).
    const again = await f.call(
      "POST",
      "/v1/kernel/tx?wait=10",
      {
        userId: user.userId,
        chain: "anvil",
        to: [f.token, f.token, f.token],
        value: ["0", "0", "0"],
        data: [transfer(alice, 1n), transfer(bob, 1n), transfer(carol, 1n)],
        auth: user.jwt
      },
      bearer
    )
    expect(again.status).toBe(200)
    expect(again.body).toMatchObject({ status: "confirmed", txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) })
    console.info(`3-call batch from a deployed Safe: ${String(again.body.gasUsed)} gas (operation)`)
    expect(await executions(again.body.userOpHash)).toBe(1)
  })

  it("refuses ?wait beyond 10 s or not whole seconds, before anything is sent", async () => {
    for (const wait of ["11", "-1", "1.5", "x", "100"]) {
      const refused = await f.call(
        "POST",
        `/v1/kernel/tx?wait=${wait}`,
        { userId: user.userId, chain: "anvil", to: [freshAddress()], value: ["1"], data: ["0x"], auth: user.jwt },
        bearer
      )
      expect(refused.status).toBe(400)
      expect(refused.body.code).toBe("invalid_request")
    }
  })

  it("refuses a batch whose second call of three reverts, with its index and reason, and changes nothing", async () => {
    const wallet = await f.walletOf(user.identity)
    const before = { eth: await f.publicClient.getBalance({ address: wallet }), tokens: await f.tokenBalance(wallet) }
    const deposit = await f.paymasterDeposit()
    const alice = freshAddress()
    const refused = await f.call(
      "POST",
      "/v1/kernel/tx",
      {
        userId: user.userId,
        chain: "anvil",
        to: [alice, f.token, f.token],
        value: ["1000", "0", "0"],
        data: ["", transfer(freshAddress(), 10n ** 30n), transfer(alice, 1n)],
        auth: user.jwt
      },
      bearer
    )
    expect(refused.status).toBe(422)
    expect(refused.body).toMatchObject({ code: "call_reverted", index: 1 })
    // The test token's own error is not one the production decoder names: the reason is its revert data, whole.
    expect(refused.body.reason).toBe(
      encodeErrorResult({
        abi: parseAbi(["error InsufficientBalance(address from, uint256 balance, uint256 needed)"]),
        errorName: "InsufficientBalance",
        args: [wallet, before.tokens, 10n ** 30n]
      })
    )
    expect(await f.publicClient.getBalance({ address: alice })).toBe(0n)
    expect(await f.tokenBalance(alice)).toBe(0n)
    expect(await f.publicClient.getBalance({ address: wallet })).toBe(before.eth)
    expect(await f.tokenBalance(wallet)).toBe(before.tokens)
    expect(await f.paymasterDeposit()).toBe(deposit)
  })

  it("lands 8 batches of a wallet not yet deployed sent at once: none refused, the deploying one first", async () => {
    const userId = "phone:eight-at-once"
    const wallet = await f.walletOf(testUserIdentity(CLIENT.clientId, userId))
    expect(await f.publicClient.getCode({ address: wallet })).toBeUndefined()
    await f.fund(wallet, 0n, 80n)
    const recipient = freshAddress()
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        f.call(
          "POST",
          "/v1/kernel/tx",
          { userId, chain: "anvil", to: [f.token], value: ["0"], data: [transfer(recipient, 10n)], auth: "" },
          bearer
        )
      )
    )
    expect(answers.map((answer) => answer.status)).toEqual(new Array(8).fill(200))
    expect(new Set(answers.map((answer) => answer.body.userOpHash)).size).toBe(8)
    const finals = await Promise.all(answers.map((answer) => f.settled(answer.body.id, bearer)))
    expect(finals.map((final) => final.status)).toEqual(new Array(8).fill("confirmed"))
    expect(await f.tokenBalance(recipient)).toBe(80n)
    // The deploying operation was included before every other one.
    const blocks = finals.map((final) => Number(final.blockNumber))
    expect(blocks.filter((block) => block === Math.min(...blocks))).toHaveLength(1)
  })

  it("lands 20 concurrent batches of one user and 20 of 20 users, without a nonce error", async () => {
    const others = Array.from(
      { length: 20 },
      (_, i) => `phone:00000000-0000-4000-8000-0000000000${String(i).padStart(2, "0")}`
    )
    const recipient = freshAddress()
    const wallet = await f.walletOf(user.identity)
    await f.fund(wallet, parseEther("1"))
    for (const userId of others) await f.fund(await f.walletOf(testUserIdentity(CLIENT.clientId, userId)), 1n)
    const send = (userId: string, auth: string) =>
      f.call(
        "POST",
        "/v1/kernel/tx",
        { userId, chain: "anvil", to: [recipient], value: ["1"], data: ["0x"], auth },
        bearer
      )
    const answers = await Promise.all([
      ...Array.from({ length: 20 }, () => send(user.userId, user.jwt)),
      // The others have no JWT: a test-mode app may send blank auth on a test network.
      ...others.map((userId) => send(userId, ""))
    ])
    expect(answers.map((answer) => answer.status)).toEqual(new Array(40).fill(200))
    const finals = await Promise.all(answers.map((answer) => f.settled(answer.body.id, bearer)))
    expect(finals.every((final) => final.status === "confirmed")).toBe(true)
    expect(await f.publicClient.getBalance({ address: recipient })).toBe(40n)
  })

  it("executes one operation for one Idempotency-Key sent 10 times concurrently, and again after it landed", async () => {
    const recipient = freshAddress()
    const body = { userId: user.userId, chain: "anvil", to: [recipient], value: ["7"], data: ["0x"], auth: user.jwt }
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        f.call("POST", "/v1/kernel/tx", body, { ...bearer, "idempotency-key": "pay-7-once" })
      )
    )
    expect(answers.map((answer) => answer.status)).toEqual(new Array(10).fill(200))
    expect(new Set(answers.map((answer) => answer.body.userOpHash)).size).toBe(1)
    expect(new Set(answers.map((answer) => answer.body.id)).size).toBe(1)
    expect((await f.settled(answers[0]?.body.id, bearer)).status).toBe("confirmed")
    expect(await f.publicClient.getBalance({ address: recipient })).toBe(7n)
    // A replay after it landed, with the chain by its id: the first answer again, nothing sent.
    const byId = await f.call(
      "POST",
      "/v1/kernel/tx",
      { ...body, chain: "31337" },
      { ...bearer, "idempotency-key": "pay-7-once" }
    )
    expect([byId.status, byId.body.userOpHash]).toEqual([200, answers[0]?.body.userOpHash])
    expect(byId.headers.get("idempotent-replayed")).toBe("true")
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await f.publicClient.getBalance({ address: recipient })).toBe(7n)
    expect(await executions(answers[0]?.body.userOpHash)).toBe(1)
    // The same key with another body is refused.
    const reused = await f.call(
      "POST",
      "/v1/kernel/tx",
      { ...body, value: ["8"] },
      { ...bearer, "idempotency-key": "pay-7-once" }
    )
    expect(reused.status).toBe(422)
    expect(reused.body.code).toBe("idempotency_key_reused")
  })

  it("shows a transaction to the app that sent it only; another app's id is a 404", async () => {
    const sent = await f.call(
      "POST",
      "/v1/kernel/tx",
      { userId: "phone:reader", chain: "anvil", to: [freshAddress()], value: ["0"], data: ["0x"], auth: "" },
      bearer
    )
    expect(sent.status).toBe(200)
    expect((await f.call("GET", `/v1/kernel/tx/${String(sent.body.id)}`, undefined, bearer)).status).toBe(200)
    const unknown = await f.call("GET", `/v1/kernel/tx/${crypto.randomUUID()}`, undefined, bearer)
    expect([unknown.status, unknown.body.code]).toEqual([404, "tx_not_found"])
    const anonymous = await f.call("GET", `/v1/kernel/tx/${String(sent.body.id)}`)
    expect(anonymous.status).toBe(401)
  })

  it("answers 503 upstream_unavailable, not 500, when the node is down", async () => {
    const down = await startKernelFixture({ nodeProxy: true })
    const token = await down.accessToken()
    down.nodeProxy?.set({ _tag: "down" })
    const answer = await down.call(
      "POST",
      "/v1/kernel/tx",
      { userId: "phone:abc", chain: "anvil", to: [freshAddress()], value: ["1"], data: ["0x"], auth: "" },
      { authorization: `Bearer ${token}` }
    )
    expect(answer.status).toBe(503)
    expect(answer.body.code).toBe("upstream_unavailable")
    expect(answer.headers.get("retry-after")).toBe("5")
    await down.stop()
  })

  it("reports each network's bundler and paymaster deposit on the health endpoint", async () => {
    const healthy = await f.call("GET", "/v1/health")
    expect(healthy.status).toBe(200)
    const pipeline = {
      bundler: { reachable: true, entryPointSupported: true },
      paymaster: {
        address: f.local.deployment.contracts.verifyingPaymaster,
        depositWei: String(await f.paymasterDeposit()),
        low: false
      }
    }
    expect(healthy.body).toEqual({
      status: "ok",
      networks: [
        { network: "anvil", ...pipeline },
        { network: "live", ...pipeline }
      ]
    })
  })

  it("is degraded (503) when the paymaster's deposit is below its low mark", async () => {
    const low = await startKernelFixture({ paymasterMinDepositWei: 10n ** 30n })
    try {
      const degraded = await low.call("GET", "/v1/health")
      expect(degraded.status).toBe(503)
      expect(degraded.body.status).toBe("degraded")
      expect(degraded.body.networks).toEqual([
        expect.objectContaining({ network: "anvil", paymaster: expect.objectContaining({ low: true }) }),
        expect.objectContaining({ network: "live", paymaster: expect.objectContaining({ low: true }) })
      ])
    } finally {
      await low.stop()
    }
  })

  it("is degraded (503) when the bundler does not answer, or does not serve the EntryPoint", async () => {
    const other = "0x0000000000000000000000000000000000000007"
    for (const [bundler, expected] of [
      [
        makeJsonRpcBundler([{ chainId: 31337, url: "http://127.0.0.1:9" }]),
        { reachable: false, entryPointSupported: false }
      ],
      [
        Bundler.of({
          ...makeJsonRpcBundler([]),
          supportedEntryPoints: () => Effect.succeed([other])
        }),
        { reachable: true, entryPointSupported: false }
      ]
    ] as const) {
      const broken = await startKernelFixture({ ports: () => Layer.succeed(Bundler, bundler) })
      try {
        const degraded = await broken.call("GET", "/v1/health")
        expect(degraded.status).toBe(503)
        expect(degraded.body.networks).toEqual([
          expect.objectContaining({ network: "anvil", bundler: expected }),
          expect.objectContaining({ network: "live", bundler: expected })
        ])
      } finally {
        await broken.stop()
      }
    }
  })
})
