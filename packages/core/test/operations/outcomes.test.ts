// How a wallet batch's failures are answered (operations/outcomes.ts, docs/security.md "How failures are classified"): one
// test per row of the table. What the caller's batch causes is a 4xx that retrying cannot change; the gateway's own
// sponsorship refused is a 502; only an upstream that does not answer properly is a 503.

import { Bundler, StoreUnavailable, TransactionLog } from "@walletgate/core"
import { makeJsonRpcBundler, testUserIdentity } from "@walletgate/core/operations"
import { Effect, Layer } from "effect"
import { encodeErrorResult, type Hash, type Hex, parseAbi } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { devnetWallet, userOperationEvents } from "../devnet/shared"
import { CLIENT, freshAddress, startKernelFixture } from "../kernel/fixture"

type Fixture = Awaited<ReturnType<typeof startKernelFixture>>

describe("a batch's failures, classified", { tags: ["devnet"] }, () => {
  let f: Fixture
  let bearer: Record<string, string>
  beforeAll(async () => {
    f = await startKernelFixture({ bundlerProxy: true })
    bearer = { authorization: `Bearer ${await f.accessToken()}` }
  })
  afterAll(async () => {
    await f?.stop()
  })

  /** Sends `calls` from the test user `userId`'s wallet (blank auth: a test-mode app on a test network). */
  const batch = (userId: string, calls: ReadonlyArray<{ to: string; value: bigint; data?: Hex }>) =>
    f.call(
      "POST",
      "/v1/kernel/tx",
      {
        userId,
        chain: "anvil",
        to: calls.map((call) => call.to),
        value: calls.map((call) => String(call.value)),
        data: calls.map((call) => call.data ?? "0x"),
        auth: ""
      },
      bearer
    )

  /** A fresh address running `code` (anvil_setCode). */
  const contract = async (code: Hex) => {
    const address = freshAddress()
    await f.local.anvilRequest("anvil_setCode", [address, code])
    return address
  }

  describe("the simulation of the calls", () => {
    it("insufficient_balance: a call sending more ETH than the wallet holds is 422 call_reverted, not 503", async () => {
      const userId = "phone:outcome-balance"
      await f.fund(await f.walletOf(testUserIdentity(CLIENT.clientId, userId)), 1_000n)
      const refused = await batch(userId, [
        { to: freshAddress(), value: 600n },
        { to: freshAddress(), value: 600n }
      ])
      expect(refused.status).toBe(422)
      expect(refused.body).toMatchObject({
        code: "call_reverted",
        index: 1,
        reason: "insufficient balance: needs 1200 wei, holds 1000 wei"
      })
      expect(refused.headers.get("retry-after")).toBeNull()
    })

    it("reverted: a call that reverts without data keeps its reason, not taken for a halt", async () => {
      const reverts = await contract("0x60006000fd") // REVERT(0, 0)
      const refused = await batch("phone:outcome-revert", [
        { to: freshAddress(), value: 0n },
        { to: reverts, value: 0n }
      ])
      expect([refused.status, refused.body.code, refused.body.index]).toEqual([422, "call_reverted", 1])
      expect(refused.body.reason).toBe("reverted without a reason")
    })

    it("halted: a call out of gas, or on an invalid opcode, is 422 call_reverted with its index", async () => {
      const loops = await contract("0x5b600056") // JUMPDEST PUSH1 0 JUMP: runs until its gas is gone
      const invalid = await contract("0xfe") // INVALID
      for (const [to, index] of [
        [loops, 0],
        [invalid, 2]
      ] as const) {
        const calls = [
          { to: freshAddress(), value: 0n },
          { to: freshAddress(), value: 0n }
        ]
        calls.splice(index, 0, { to, value: 0n })
        const refused = await batch("phone:outcome-halt", calls)
        expect(refused.status).toBe(422)
        expect(refused.body).toMatchObject({
          code: "call_reverted",
          index,
          reason: "halted: out of gas or an invalid opcode"
        })
      }
    })
  })

  describe("the bundler's answers", () => {
    const revertData = encodeErrorResult({ abi: parseAbi(["error Error(string)"]), errorName: "Error", args: ["nope"] })
    // [bundler's code, its message, status, code, reason]
    const rows: ReadonlyArray<readonly [number, string, number, string, string]> = [
      [
        -32500,
        "UserOperation reverted during simulation with reason: AA21 didn't pay prefund",
        422,
        "operation_rejected",
        "AA21 didn't pay prefund"
      ],
      [
        -32500,
        "UserOperation reverted during simulation with reason: AA13 initCode failed or OOG",
        422,
        "operation_rejected",
        "AA13 initCode failed or OOG"
      ],
      [
        -32500,
        "UserOperation reverted during simulation with reason: AA40 over verificationGasLimit",
        422,
        "operation_rejected",
        "AA40 over verificationGasLimit"
      ],
      [-32500, "preVerificationGas is not enough", 422, "operation_rejected", "account validation failed"],
      [
        -32602,
        "AA25 invalid account nonce: User operation already present in mempool",
        422,
        "operation_rejected",
        "AA25 invalid account nonce"
      ],
      [-32602, "verificationGasLimit must be at least 10000", 422, "operation_rejected", "invalid operation fields"],
      [
        -32502,
        "account uses banned opcode: GASPRICE",
        422,
        "operation_rejected",
        "a banned opcode or storage access in validation"
      ],
      [-32503, "expires too soon", 422, "operation_rejected", "the operation expires too soon"],
      [-32507, "Invalid UserOp signature", 422, "operation_rejected", "invalid signature"],
      [-32521, `UserOperation reverted during simulation with reason: ${revertData}`, 422, "call_reverted", "nope"],
      [-32501, "paymaster validation failed: AA33 reverted", 502, "upstream_refused", "AA33 reverted"],
      [
        -32507,
        "UserOperation reverted during simulation with reason: AA34 signature error",
        502,
        "upstream_refused",
        "AA34 signature error"
      ],
      [-32508, "paymaster deposit too low", 502, "upstream_refused", "the paymaster's deposit is too low"],
      [
        -32504,
        "paymaster 0x01 is throttled by the pimlico",
        502,
        "upstream_refused",
        "an entity is throttled or banned"
      ],
      [-32505, "factory 0x01 is unstaked", 502, "upstream_refused", "an entity's stake is too low"],
      [-32506, "unsupported aggregator", 502, "upstream_refused", "unsupported signature aggregator"],
      // alto's refusals for a while: the same request, priced and sent again, passes (never a final 4xx).
      [
        -32602,
        "maxFeePerGas must be at least 2000000000 (current maxFeePerGas: 1000000000) - use pimlico_getUserOperationGasPrice to get the current gas price",
        503,
        "bundler_busy",
        "fees under the bundler's current minimum"
      ],
      [
        -32602,
        "AA25 invalid account nonce: Maximum number of parallel user operations for that is allowed for this sender reached",
        503,
        "bundler_busy",
        "the sender's pending operations are at the mempool's limit"
      ],
      [
        -32602,
        "AA25 invalid account nonce: User operation already present in mempool, bump the gas price by minimum 10%",
        503,
        "bundler_busy",
        "a replacement must be priced 10 % higher"
      ],
      [-32603, "Internal error", 503, "bundler_unavailable", ""],
      [-32601, "Method not supported: eth_estimateUserOperationGas", 503, "bundler_unavailable", ""]
    ]
    it.each(rows)("error %i (%s) is %i %s", async (bundlerCode, message, status, code, reason) => {
      const userId = "phone:outcome-bundler"
      await f.fund(await f.walletOf(testUserIdentity(CLIENT.clientId, userId)), 10n)
      f.bundlerProxy?.set({ _tag: "errorOn", method: "eth_estimateUserOperationGas", code: bundlerCode, message })
      try {
        const answer = await batch(userId, [{ to: freshAddress(), value: 1n }])
        expect([answer.status, answer.body.code]).toEqual([status, code])
        if (reason !== "") expect(answer.body.reason).toBe(reason)
        // Only the 503 says to retry soon.
        expect(answer.headers.get("retry-after")).toBe(status === 503 ? "5" : null)
      } finally {
        f.bundlerProxy?.set({ _tag: "pass" })
      }
    })

    it("a refusal of the send itself is answered the same way, and nothing stands recorded", async () => {
      const userId = "phone:outcome-send"
      await f.fund(await f.walletOf(testUserIdentity(CLIENT.clientId, userId)), 10n)
      f.bundlerProxy?.set({
        _tag: "errorOn",
        method: "eth_sendUserOperation",
        code: -32500,
        message: "UserOperation reverted during simulation with reason: AA23 reverted"
      })
      try {
        const key = { ...bearer, "idempotency-key": "outcome-send-1" }
        const body = { userId, chain: "anvil", to: [freshAddress()], value: ["1"], data: ["0x"], auth: "" }
        const refused = await f.call("POST", "/v1/kernel/tx", body, key)
        expect([refused.status, refused.body.code, refused.body.reason]).toEqual([
          422,
          "operation_rejected",
          "AA23 reverted"
        ])
        f.bundlerProxy?.set({ _tag: "pass" })
        // The refused operation was discarded: the same key runs the batch again, and it lands.
        const retried = await f.call("POST", "/v1/kernel/tx", body, key)
        expect(retried.status).toBe(200)
        expect((await f.settled(retried.body.id, bearer)).status).toBe("confirmed")
      } finally {
        f.bundlerProxy?.set({ _tag: "pass" })
      }
    })

    it("a bundler answering what is not JSON-RPC is 503 bundler_unavailable", async () => {
      f.bundlerProxy?.set({ _tag: "garbage" })
      try {
        const answer = await batch("phone:outcome-garbage", [{ to: freshAddress(), value: 0n }])
        expect([answer.status, answer.body.code]).toEqual([503, "bundler_unavailable"])
      } finally {
        f.bundlerProxy?.set({ _tag: "pass" })
      }
    })
  })
})

describe("a Safe deployed between the gateway's read and its send (AA10)", { tags: ["devnet"] }, () => {
  /**
   * Whether the next deploying operation is preceded by the Safe's deployment, the operations sent, whether the
   * request dies right after the bundler accepts the next operation without deployment (its answer lost), and a
   * record id whose reads fail (a store that cannot read it).
   */
  const race = {
    armed: false,
    sent: [] as Array<{ readonly deploys: boolean }>,
    dieAfterResend: false,
    unreadable: undefined as string | undefined
  }
  let f: Fixture
  let bearer: Record<string, string>
  beforeAll(async () => {
    f = await startKernelFixture({
      ports: (devnet) =>
        Layer.mergeAll(
          Layer.sync(Bundler, () => {
            const inner = makeJsonRpcBundler([{ chainId: devnet.chain.id, url: devnet.bundlerUrl }])
            return Bundler.of({
              ...inner,
              sendUserOperation: (chainId, op, entryPoint) =>
                Effect.gen(function* () {
                  race.sent.push({ deploys: op.factory !== undefined })
                  if (race.armed && op.factory !== undefined && op.factoryData !== undefined) {
                    race.armed = false
                    // Another party deploys the Safe first, through the factory the operation names: the gateway read
                    // no code, and its deploying operation now meets a Safe that exists.
                    const { factory, factoryData } = op
                    yield* Effect.promise(async () => {
                      const hash = await devnetWallet(devnet).sendTransaction({ to: factory, data: factoryData })
                      await devnet.publicClient.waitForTransactionReceipt({ hash })
                    })
                  }
                  const accepted = yield* inner.sendUserOperation(chainId, op, entryPoint)
                  if (race.dieAfterResend && op.factory === undefined) {
                    race.dieAfterResend = false
                    return yield* Effect.die(new Error("the process died after eth_sendUserOperation"))
                  }
                  return accepted
                })
            })
          }),
          Layer.effect(
            TransactionLog,
            Effect.gen(function* () {
              const inner = yield* TransactionLog
              return TransactionLog.of({
                ...inner,
                find: (id) =>
                  id === race.unreadable ? Effect.fail(new StoreUnavailable({ operation: "find" })) : inner.find(id)
              })
            })
          ).pipe(Layer.provide(TransactionLog.memory))
        )
    })
    bearer = { authorization: `Bearer ${await f.accessToken()}` }
  })
  afterAll(async () => {
    await f?.stop()
  })

  it("signs the batch again without the deployment, under the same id and key, and it executes once", async () => {
    const userId = "phone:outcome-aa10"
    const wallet = await f.walletOf(testUserIdentity(CLIENT.clientId, userId))
    await f.fund(wallet, 100n)
    expect(await f.publicClient.getCode({ address: wallet })).toBeUndefined()
    const recipient = freshAddress()
    const body = { userId, chain: "anvil", to: [recipient], value: ["9"], data: ["0x"], auth: "" }
    const key = { ...bearer, "idempotency-key": "outcome-aa10-1" }
    race.armed = true
    race.sent.length = 0
    const sent = await f.call("POST", "/v1/kernel/tx", body, key)
    expect(sent.status).toBe(200)
    // The deploying operation was refused (AA10); the one sent again carries no deployment.
    expect(race.sent).toEqual([{ deploys: true }, { deploys: false }])
    expect((await f.settled(sent.body.id, bearer)).status).toBe("confirmed")
    expect(await f.publicClient.getBalance({ address: recipient })).toBe(9n)
    const replay = await f.call("POST", "/v1/kernel/tx", body, key)
    expect([replay.body.id, replay.body.userOpHash]).toEqual([sent.body.id, sent.body.userOpHash])
    const events = await userOperationEvents(f.local, { userOpHash: sent.body.userOpHash as Hash })
    expect(events).toHaveLength(1)
    expect(race.sent).toHaveLength(2)
  })

  it("a request that dies after sending the batch signed again: the key answers that operation's hash", async () => {
    const userId = "phone:outcome-aa10-lost"
    const wallet = await f.walletOf(testUserIdentity(CLIENT.clientId, userId))
    await f.fund(wallet, 100n)
    const recipient = freshAddress()
    const body = { userId, chain: "anvil", to: [recipient], value: ["7"], data: ["0x"], auth: "" }
    const key = { ...bearer, "idempotency-key": "outcome-aa10-lost-1" }
    race.armed = true
    race.dieAfterResend = true
    race.sent.length = 0
    const lost = await f.call("POST", "/v1/kernel/tx", body, key)
    expect(race.sent).toEqual([{ deploys: true }, { deploys: false }])
    expect([lost.status, lost.body.code]).toEqual([502, "outcome_unknown"])
    // A retry that cannot read the record answers from the key's link alone: the operation actually sent.
    race.unreadable = String(lost.body.id)
    const blind = await f.call("POST", "/v1/kernel/tx", body, key).finally(() => {
      race.unreadable = undefined
    })
    expect(blind).toMatchObject({
      status: 502,
      body: { code: "outcome_unknown", id: lost.body.id, txHash: lost.body.txHash }
    })
    const retried = await f.call("POST", "/v1/kernel/tx", body, key)
    expect(retried.status).toBe(200)
    expect([retried.body.id, retried.body.userOpHash]).toEqual([lost.body.id, lost.body.txHash])
    expect((await f.settled(retried.body.id, bearer)).status).toBe("confirmed")
    expect(await f.publicClient.getBalance({ address: recipient })).toBe(7n)
    expect(await userOperationEvents(f.local, { userOpHash: lost.body.txHash as Hash })).toHaveLength(1)
    expect(race.sent).toHaveLength(2)
  })
})

describe("AA10 while the Safe still has no code after the deploy wait", { tags: ["devnet"] }, () => {
  let f: Fixture
  let bearer: Record<string, string>
  beforeAll(async () => {
    f = await startKernelFixture({ bundlerProxy: true, pipeline: { operations: { deployWaitMs: 1_000 } } })
    bearer = { authorization: `Bearer ${await f.accessToken()}` }
  })
  afterAll(async () => {
    await f?.stop()
  })

  it("is 503 account_deploying with Retry-After, nothing sent; the retry with the key executes once", async () => {
    const userId = "phone:outcome-aa10-deploying"
    const wallet = await f.walletOf(testUserIdentity(CLIENT.clientId, userId))
    await f.fund(wallet, 100n)
    const recipient = freshAddress()
    const body = { userId, chain: "anvil", to: [recipient], value: ["7"], data: ["0x"], auth: "" }
    const key = { ...bearer, "idempotency-key": "outcome-aa10-deploying-1" }
    const deposit = await f.paymasterDeposit()
    // The bundler says the Safe is being deployed (another deploying operation waits in it) while it has no code.
    f.bundlerProxy?.set({
      _tag: "errorOn",
      method: "eth_sendUserOperation",
      code: -32500,
      message: "UserOperation reverted during simulation with reason: AA10 sender already constructed"
    })
    const refused = await f
      .call("POST", "/v1/kernel/tx", body, key)
      .finally(() => f.bundlerProxy?.set({ _tag: "pass" }))
    expect([refused.status, refused.body.code]).toEqual([503, "account_deploying"])
    expect(refused.headers.get("retry-after")).toBe("5")
    expect(await f.publicClient.getCode({ address: wallet })).toBeUndefined()
    expect(await f.paymasterDeposit()).toBe(deposit)
    // Nothing stands as sent: the key was given up, and the retry runs the batch, once.
    const retried = await f.call("POST", "/v1/kernel/tx", body, key)
    expect(retried.status).toBe(200)
    expect(retried.headers.get("idempotent-replayed")).toBeNull()
    expect((await f.settled(retried.body.id, bearer)).status).toBe("confirmed")
    expect(await f.publicClient.getBalance({ address: recipient })).toBe(7n)
    expect(await userOperationEvents(f.local, { userOpHash: retried.body.userOpHash as Hash })).toHaveLength(1)
  })
})
