// Finality on a real network's faults (issue 21), through the HTTP routes, anvil and a real alto: a reorg that takes
// operations' blocks away, a bundle dropped from the node's pool, and a base-fee spike. Each ends with every
// operation landed exactly once (one UserOperationEvent per hash on the canonical chain, the recipients paid once)
// or reported failed; status is only ever read in the request (GET /v1/kernel/tx/:id), nothing runs after it.
import { testUserIdentity } from "@walletgate/core/operations"
import type { Hash } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { userOperationEvents } from "../devnet/shared"
import { CLIENT, freshAddress, startKernelFixture } from "../kernel/fixture"

type Fixture = Awaited<ReturnType<typeof startKernelFixture>>
type Answer = Awaited<ReturnType<Fixture["call"]>>

// Deeper than the blocks the operations of one test can make on automine (one per bundle: at most one per
// operation), so that none is final before the reorg however alto splits them into bundles.
const CONFIRMATIONS = 8
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("operations through reorgs, dropped bundles and fee spikes (anvil + alto)", { tags: ["devnet"] }, () => {
  let f: Fixture
  let bearer: Record<string, string>
  let users = 0
  beforeAll(async () => {
    // Its own devnet: the reorgs rewind the chain, which the worker's other files must never see.
    f = await startKernelFixture({ confirmations: CONFIRMATIONS, ownDevnet: true })
    bearer = { authorization: `Bearer ${await f.accessToken()}` }
  })
  afterAll(async () => {
    await f?.stop()
  })

  const anvil = (method: string, params: ReadonlyArray<unknown> = []) =>
    f.publicClient.request({ method: method as never, params: params as never })

  /** How many times the EntryPoint executed `userOpHash` on the node's canonical chain. */
  const executions = async (userOpHash: unknown) =>
    (await userOperationEvents(f.local, { userOpHash: userOpHash as Hash })).length

  /** `count` fresh users whose wallets hold ETH (not deployed yet). */
  const newUsers = async (count: number) => {
    const userIds = Array.from({ length: count }, () => `phone:finality-${users++}`)
    for (const userId of userIds) await f.fund(await f.walletOf(testUserIdentity(CLIENT.clientId, userId)), 10n ** 15n)
    return userIds
  }

  /** One batch from each of `userIds` (i + 1 wei to a fresh recipient), answered once the bundler has it. */
  const sendBatches = async (userIds: ReadonlyArray<string>) =>
    Promise.all(
      userIds.map(async (userId, index) => {
        const recipient = freshAddress()
        const amount = BigInt(index + 1)
        const answer = await f.call(
          "POST",
          "/v1/kernel/tx",
          { userId, chain: "anvil", to: [recipient], value: [String(amount)], data: ["0x"], auth: "" },
          bearer
        )
        expect(answer.status).toBe(200)
        return { answer, recipient, amount }
      })
    )

  /**
   * `count` users whose Safes are deployed (a first batch landed): a batch of theirs is answered as soon as the
   * bundler has it, even while the node mines nothing (a first one waits, inside its request, for the deployment).
   */
  const deployedUsers = async (count: number) => {
    const userIds = await newUsers(count)
    await expectLandedOnce(await sendBatches(userIds))
    return userIds
  }

  const read = (id: unknown) => f.call("GET", `/v1/kernel/tx/${String(id)}`, undefined, bearer)

  /** Reads each status as a client would until every one is final, mining a block between reads (a live chain). */
  const untilFinal = async (ids: ReadonlyArray<unknown>, ms = 15_000) => {
    const deadline = Date.now() + ms
    const finals = new Map<unknown, Answer["body"]>()
    while (finals.size < ids.length && Date.now() < deadline) {
      for (const id of ids) {
        if (finals.has(id)) continue
        const answer = await read(id)
        expect(answer.status).toBe(200)
        if (answer.body.status !== "submitted") finals.set(id, answer.body)
      }
      await anvil("anvil_mine", ["0x1"])
      await wait(100)
    }
    return ids.map((id) => finals.get(id))
  }

  /** Every operation landed exactly once: final `confirmed`, one execution per hash, each recipient paid once. */
  const expectLandedOnce = async (sent: Awaited<ReturnType<typeof sendBatches>>, ms?: number) => {
    const finals = await untilFinal(
      sent.map((one) => one.answer.body.id),
      ms
    )
    expect(finals.map((final) => final?.status)).toEqual(sent.map(() => "confirmed"))
    for (const one of sent) {
      expect(await executions(one.answer.body.userOpHash)).toBe(1)
      expect(await f.publicClient.getBalance({ address: one.recipient })).toBe(one.amount)
    }
  }

  /** Reads each status until the operation is included (not yet final): its transaction and block. */
  const untilIncluded = async (sent: Awaited<ReturnType<typeof sendBatches>>) => {
    const included = new Map<unknown, { txHash: Hash; blockNumber: number; blockHash: Hash }>()
    const deadline = Date.now() + 20_000
    while (included.size < sent.length && Date.now() < deadline) {
      for (const one of sent) {
        const answer = await read(one.answer.body.id)
        expect(answer.body.status).toBe("submitted")
        if (answer.body.txHash !== undefined && !included.has(one.answer.body.id)) {
          const txHash = answer.body.txHash as Hash
          const receipt = await f.publicClient.getTransactionReceipt({ hash: txHash })
          included.set(one.answer.body.id, {
            txHash,
            blockNumber: Number(answer.body.blockNumber),
            blockHash: receipt.blockHash
          })
        }
      }
      await wait(50)
    }
    expect(included.size).toBe(sent.length)
    return [...included.values()]
  }

  it("a reorg that takes the operations' blocks away: reported pending again, re-sent as they were, landed once", async () => {
    const sent = await sendBatches(await newUsers(4))
    // Included, not yet final: the status read shows the including transaction.
    const included = new Map<unknown, number>()
    const deadline = Date.now() + 20_000
    while (included.size < sent.length && Date.now() < deadline) {
      for (const one of sent) {
        const answer = await read(one.answer.body.id)
        if (answer.body.blockNumber !== undefined) included.set(one.answer.body.id, Number(answer.body.blockNumber))
        expect(answer.body.status).toBe("submitted")
      }
      await wait(50)
    }
    expect(included.size).toBe(sent.length)
    const head = await f.publicClient.getBlockNumber({ cacheTime: 0 })
    const depth = Number(head) - Math.min(...included.values()) + 1
    expect(depth).toBeLessThan(CONFIRMATIONS)
    // The blocks that held them are replaced by empty ones: the operations are no longer on the chain.
    await anvil("anvil_reorg", [depth, []])
    for (const one of sent) {
      expect(await executions(one.answer.body.userOpHash)).toBe(0)
      expect(await f.publicClient.getBalance({ address: one.recipient })).toBe(0n)
    }
    // The bundler still serves its receipts of the lost blocks; the status read must not believe them.
    for (const one of sent) {
      const answer = await read(one.answer.body.id)
      expect(answer.body.status).toBe("submitted")
      expect(answer.body.userOpHash).toBe(one.answer.body.userOpHash)
    }
    await expectLandedOnce(sent)
  })

  it("a reorg that mines the same bundle again in another block: confirmed from the node's block, never stuck", async () => {
    const sent = await sendBatches(await newUsers(3))
    const included = await untilIncluded(sent)
    const bundles = [...new Set(included.map((one) => one.txHash))]
    const raws = await Promise.all(bundles.map((hash) => anvil("eth_getRawTransactionByHash", [hash])))
    const head = await f.publicClient.getBlockNumber({ cacheTime: 0 })
    const depth = Number(head) - Math.min(...included.map((one) => one.blockNumber)) + 1
    expect(depth).toBeLessThan(CONFIRMATIONS)
    // The same signed bundle transactions, mined again one block later than before: same hashes, other blocks.
    await anvil("anvil_reorg", [depth, raws.map((raw) => [raw, Math.min(1, depth - 1)])])
    for (const one of included) {
      const moved = await f.publicClient.getTransactionReceipt({ hash: one.txHash })
      expect(moved.blockHash).not.toBe(one.blockHash)
    }
    await expectLandedOnce(sent)
  })

  /** The bundle transactions waiting in the node's pool (automine off), once there are `count` operations' worth. */
  const pendingBundles = async () => {
    const deadline = Date.now() + 10_000
    while (Date.now() < deadline) {
      const pool = (await anvil("txpool_content")) as {
        pending: Record<string, Record<string, { hash: Hash; to: string | null }>>
      }
      const hashes = Object.values(pool.pending)
        .flatMap((byNonce) => Object.values(byNonce))
        .filter((tx) => tx.to?.toLowerCase() === f.local.deployment.contracts.entryPoint.toLowerCase())
        .map((tx) => tx.hash)
      if (hashes.length > 0) return hashes
      await wait(50)
    }
    throw new Error("no bundle reached the node's pool")
  }

  /** Runs `body` with the node mining only when asked (`anvil_mine`), then mines on each transaction again. */
  const withoutAutomine = async (body: () => Promise<void>) => {
    await anvil("evm_setAutomine", [false])
    try {
      await body()
    } finally {
      await anvil("evm_setAutomine", [true])
    }
  }

  it("a bundle dropped from the node's pool: the operations are re-sent and land once", async () => {
    const userIds = await deployedUsers(3)
    await withoutAutomine(async () => {
      const sent = await sendBatches(userIds)
      const bundles = await pendingBundles()
      for (const hash of bundles) await anvil("anvil_dropTransaction", [hash])
      for (const one of sent) expect((await read(one.answer.body.id)).body.status).toBe("submitted")
      await expectLandedOnce(sent, 40_000)
    })
  })

  it("a base-fee spike while a bundle waits: the operations land once (or are reported failed), never twice", async () => {
    const userIds = await deployedUsers(3)
    await withoutAutomine(async () => {
      const sent = await sendBatches(userIds)
      await pendingBundles()
      await anvil("anvil_setNextBlockBaseFeePerGas", [`0x${(20n * 10n ** 9n).toString(16)}`])
      await expectLandedOnce(sent)
    })
  })
})
