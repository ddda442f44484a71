import { testUserIdentity } from "@walletgate/core/chain"
import { testTokenArtifact } from "@walletgate/core/devnet"
import { encodeFunctionData, parseEther } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CLIENT, freshAddress, startKernelFixture } from "./fixture"

type Fixture = Awaited<ReturnType<typeof startKernelFixture>>

describe("POST /v1/kernel/tx on a real anvil", () => {
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

  it("runs an ETH transfer and an ERC-20 transfer atomically from the user's new wallet", async () => {
    const wallet = await f.walletOf(user.identity)
    await f.fund(wallet, parseEther("1"), 5_000_000n)
    const alice = freshAddress()
    const bob = freshAddress()
    const sent = await f.call(
      "POST",
      "/v1/kernel/tx",
      {
        userId: user.userId,
        chain: "anvil",
        to: [alice, f.token],
        value: ["250000000000000000", "0"],
        data: ["0x", transfer(bob, 1_500_000n)],
        auth: user.jwt
      },
      bearer
    )
    expect(sent.status).toBe(200)
    expect(sent.body).toMatchObject({ userId: user.userId, chain: "anvil", account: wallet, status: "submitted" })
    const receipt = await f.publicClient.waitForTransactionReceipt({ hash: sent.body.txHash as `0x${string}` })
    expect(receipt.status).toBe("success")
    expect(await f.publicClient.getBalance({ address: alice })).toBe(parseEther("0.25"))
    expect(await f.tokenBalance(bob)).toBe(1_500_000n)

    // The status endpoint reports the mined transaction.
    let status = await f.call("GET", `/v1/kernel/tx/${String(sent.body.id)}`, undefined, bearer)
    for (let i = 0; i < 50 && status.body.status === "submitted"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      status = await f.call("GET", `/v1/kernel/tx/${String(sent.body.id)}`, undefined, bearer)
    }
    expect(status.body).toMatchObject({
      id: sent.body.id,
      status: "confirmed",
      blockNumber: Number(receipt.blockNumber)
    })
    expect(status.body.gasUsed).toBe(receipt.gasUsed.toString())
  })

  it("refuses a batch whose second call reverts, with its index and reason, and changes nothing", async () => {
    const wallet = await f.walletOf(user.identity)
    const before = { eth: await f.publicClient.getBalance({ address: wallet }), tokens: await f.tokenBalance(wallet) }
    const alice = freshAddress()
    const refused = await f.call(
      "POST",
      "/v1/kernel/tx",
      {
        userId: user.userId,
        chain: "anvil",
        to: [alice, f.token],
        value: ["1000", "0"],
        data: ["", transfer(freshAddress(), 10n ** 30n)],
        auth: user.jwt
      },
      bearer
    )
    expect(refused.status).toBe(422)
    expect(refused.body).toMatchObject({ code: "call_reverted", index: 1 })
    expect(String(refused.body.reason)).toMatch(/^InsufficientBalance\(/)
    expect(await f.publicClient.getBalance({ address: alice })).toBe(0n)
    expect(await f.publicClient.getBalance({ address: wallet })).toBe(before.eth)
    expect(await f.tokenBalance(wallet)).toBe(before.tokens)
  })

  it("lands 20 concurrent batches of one user and 20 of 20 users, without a nonce error", async () => {
    const wallet = await f.walletOf(user.identity)
    await f.fund(wallet, parseEther("1"))
    const others: Array<string> = []
    for (let i = 0; i < 20; i++) {
      const userId = `phone:00000000-0000-4000-8000-0000000000${String(i).padStart(2, "0")}`
      // Blank auth reaches the app's own test user of that name, never the real user's wallet.
      await f.fund(await f.walletOf(testUserIdentity(CLIENT.clientId, userId)), parseEther("0.01"))
      others.push(userId)
    }
    const recipient = freshAddress()
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
    const receipts = await Promise.all(
      answers.map((answer) => f.publicClient.waitForTransactionReceipt({ hash: answer.body.txHash as `0x${string}` }))
    )
    expect(receipts.every((receipt) => receipt.status === "success")).toBe(true)
    expect(await f.publicClient.getBalance({ address: recipient })).toBe(40n)
  })

  it("sends one transaction for one Idempotency-Key sent 10 times concurrently", async () => {
    const recipient = freshAddress()
    const body = { userId: user.userId, chain: "anvil", to: [recipient], value: ["7"], data: ["0x"], auth: user.jwt }
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        f.call("POST", "/v1/kernel/tx", body, { ...bearer, "idempotency-key": "pay-7-once" })
      )
    )
    expect(answers.map((answer) => answer.status)).toEqual(new Array(10).fill(200))
    expect(new Set(answers.map((answer) => answer.body.txHash)).size).toBe(1)
    expect(new Set(answers.map((answer) => answer.body.id)).size).toBe(1)
    await f.publicClient.waitForTransactionReceipt({ hash: answers[0]?.body.txHash as `0x${string}` })
    expect(await f.publicClient.getBalance({ address: recipient })).toBe(7n)
    // The chain by its id is the same request: the first answer again, nothing sent.
    const byId = await f.call(
      "POST",
      "/v1/kernel/tx",
      { ...body, chain: "31337" },
      { ...bearer, "idempotency-key": "pay-7-once" }
    )
    expect([byId.status, byId.body.txHash]).toEqual([200, answers[0]?.body.txHash])
    expect(await f.publicClient.getBalance({ address: recipient })).toBe(7n)
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

  it("answers 503 upstream_unavailable, not 500, when the node is down", async () => {
    const down = await startKernelFixture()
    const token = await down.accessToken()
    await down.local.stop()
    const answer = await down.call(
      "POST",
      "/v1/kernel/tx",
      { userId: "phone:abc", chain: "anvil", to: [freshAddress()], value: ["1"], data: ["0x"], auth: "" },
      { authorization: `Bearer ${token}` }
    )
    expect(answer.status).toBe(503)
    expect(answer.body.code).toBe("upstream_unavailable")
    expect(answer.headers.get("retry-after")).toBe("5")
    await down.gateway.dispose()
  })

  it("reports the relayer's balance, and a low one, on the health endpoint", async () => {
    const healthy = await f.call("GET", "/v1/health")
    expect(healthy.status).toBe(200)
    expect(healthy.body.status).toBe("ok")
    const low = await startKernelFixture({ relayerLowBalanceWei: 10n ** 30n })
    try {
      const degraded = await low.call("GET", "/v1/health")
      expect(degraded.status).toBe(503)
      expect(degraded.body.status).toBe("degraded")
      expect(degraded.body.relayers).toEqual([
        expect.objectContaining({ network: "anvil", low: true, reachable: true }),
        expect.objectContaining({ network: "live", low: true, reachable: true })
      ])
    } finally {
      await low.stop()
    }
  })
})
