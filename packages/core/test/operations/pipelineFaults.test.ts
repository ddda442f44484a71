// Faults between recording an operation and sending it, on the ERC-4337 pipeline: a store that fails to link the
// record to the Idempotency-Key, and a request that dies (a crash, a lost process) after the link and before
// `eth_sendUserOperation`. Each ends with the batch executed exactly once.
import { Bundler, IdempotencyStore, StoreUnavailable } from "@walletgate/core"
import { makeJsonRpcBundler, testUserIdentity } from "@walletgate/core/operations"
import { Effect, Layer } from "effect"
import type { Hash } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { userOperationEvents } from "../devnet/shared"
import { CLIENT, freshAddress, startKernelFixture } from "../kernel/fixture"

type Fixture = Awaited<ReturnType<typeof startKernelFixture>>

/** What the next request meets: a link that fails, or a send that never happens (the request dies first). */
const faults = { failNextLink: false, dieBeforeNextSend: false, sends: 0 }

describe("faults between recording and sending an operation", { tags: ["devnet"] }, () => {
  let f: Fixture
  let bearer: Record<string, string>
  beforeAll(async () => {
    f = await startKernelFixture({
      ports: (devnet) =>
        Layer.mergeAll(
          Layer.effect(
            IdempotencyStore,
            Effect.gen(function* () {
              const inner = yield* IdempotencyStore
              return IdempotencyStore.of({
                ...inner,
                link: (...args) =>
                  Effect.suspend(() => {
                    if (!faults.failNextLink) return inner.link(...args)
                    faults.failNextLink = false
                    return Effect.fail(new StoreUnavailable({ operation: "link" }))
                  })
              })
            })
          ).pipe(Layer.provide(IdempotencyStore.memory)),
          Layer.sync(Bundler, () => {
            const inner = makeJsonRpcBundler([{ chainId: devnet.chain.id, url: devnet.bundlerUrl }])
            return Bundler.of({
              ...inner,
              sendUserOperation: (...args) =>
                Effect.suspend(() => {
                  if (!faults.dieBeforeNextSend) {
                    faults.sends++
                    return inner.sendUserOperation(...args)
                  }
                  faults.dieBeforeNextSend = false
                  return Effect.die(new Error("the process died before eth_sendUserOperation"))
                })
            })
          })
        )
    })
    bearer = { authorization: `Bearer ${await f.accessToken()}` }
  })
  afterAll(async () => {
    await f?.stop()
  })

  const executions = async (userOpHash: unknown) =>
    (await userOperationEvents(f.local, { userOpHash: userOpHash as Hash })).length

  const batch = (userId: string, to: string, key: string) =>
    f.call(
      "POST",
      "/v1/kernel/tx",
      { userId, chain: "anvil", to: [to], value: ["5"], data: ["0x"], auth: "" },
      { ...bearer, "idempotency-key": key }
    )

  it("a store that cannot link the record sends nothing (503); the retry with the key executes it once", async () => {
    const userId = "phone:link-fault"
    const wallet = await f.walletOf(testUserIdentity(CLIENT.clientId, userId))
    await f.fund(wallet, 100n)
    const to = freshAddress()
    const deposit = await f.paymasterDeposit()
    const sendsBefore = faults.sends
    faults.failNextLink = true
    const failed = await batch(userId, to, "link-fault-1")
    expect(failed.status).toBe(503)
    expect(failed.body.code).toBe("store_unavailable")
    expect(faults.sends).toBe(sendsBefore)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await f.publicClient.getBalance({ address: to })).toBe(0n)
    expect(await f.paymasterDeposit()).toBe(deposit)
    const retried = await batch(userId, to, "link-fault-1")
    expect(retried.status).toBe(200)
    expect((await f.settled(retried.body.id, bearer)).status).toBe("confirmed")
    expect(await f.publicClient.getBalance({ address: to })).toBe(5n)
    expect(await executions(retried.body.userOpHash)).toBe(1)
  })

  it("a request that dies after recording, before sending: the retry re-sends the same operation, executed once", async () => {
    const userId = "phone:send-fault"
    const wallet = await f.walletOf(testUserIdentity(CLIENT.clientId, userId))
    await f.fund(wallet, 100n)
    const to = freshAddress()
    faults.dieBeforeNextSend = true
    const lost = await batch(userId, to, "send-fault-1")
    // The record and its link exist: the answer names the operation, whose state it cannot vouch for.
    expect(lost.status).toBe(502)
    expect(lost.body.code).toBe("outcome_unknown")
    expect(lost.body.txHash).toMatch(/^0x[0-9a-f]{64}$/)
    const retried = await batch(userId, to, "send-fault-1")
    expect(retried.status).toBe(200)
    expect(retried.body).toMatchObject({ id: lost.body.id, userOpHash: lost.body.txHash })
    const again = await batch(userId, to, "send-fault-1")
    expect(again.body.userOpHash).toBe(lost.body.txHash)
    expect((await f.settled(retried.body.id, bearer)).status).toBe("confirmed")
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await f.publicClient.getBalance({ address: to })).toBe(5n)
    expect(await executions(lost.body.txHash)).toBe(1)
  })
})
