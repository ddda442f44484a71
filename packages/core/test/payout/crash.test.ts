import type { ChildProcess } from "node:child_process"
import { ApiKeyStore, AutomationAccounts, SecureRandom } from "@walletgate/core"
import { automationIdentity } from "@walletgate/core/operations"
import { automationSafe, makeApiKey } from "@walletgate/core/payout"
import { RedisStores } from "@walletgate/redis"
import { Effect, Layer } from "effect"
import { type Address, getAddress, zeroAddress } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RedisServer, startRedisServer } from "../../../store-redis/test/redis-server"
import { deriveOwnerKey } from "../../src/operations/KeyVault"
import { startRpcProxy } from "../devnet/rpcProxy"
import { freshAddress } from "../devnet/shared"
import { devnetNetwork, partSends, startPayoutDevnet } from "./fixture"
import { startGatewayProcess } from "./gatewayProcess"

// A gateway process killed (SIGKILL) after it recorded a payout's signed operation and linked it to the
// Idempotency-Key, before the bundler got it; another process on the same Redis, retried with the same key, sends
// that same operation (same hash) and the EntryPoint executes it once. Likewise for a payout in several operations
// killed between its parts: the retry sends the rest, each part once. The processes run the built packages.
const PREFIX = "crash:"

type Chain = Awaited<ReturnType<typeof startPayoutDevnet>>

describe("a payout whose gateway process dies between recording and sending", () => {
  let chain: Chain
  let redis: RedisServer
  let proxy: Awaited<ReturnType<typeof startRpcProxy>>
  let key = ""
  let account: Address
  /** An account without a plan, for a payout in several operations. */
  let bulk: Address
  const recipient = getAddress(freshAddress())
  const processes: Array<ChildProcess> = []

  beforeAll(async () => {
    chain = await startPayoutDevnet()
    redis = await startRedisServer()
    proxy = await startRpcProxy(chain.devnet.bundlerUrl)
    const owner = privateKeyToAccount(deriveOwnerKey(chain.masterSecret, automationIdentity("crash"))).address
    account = automationSafe(owner, { accountKey: "crash" }).address
    const bulkOwner = privateKeyToAccount(deriveOwnerKey(chain.masterSecret, automationIdentity("crash-bulk"))).address
    bulk = automationSafe(bulkOwner, { accountKey: "crash-bulk" }).address
    const made = Effect.runSync(
      makeApiKey({ mode: "test", networks: ["anvil"], accounts: [account, bulk] }).pipe(
        Effect.provide(SecureRandom.crypto)
      )
    )
    key = made.key
    // The account and the key, as the operator registered them in Redis.
    await Effect.runPromise(
      Effect.gen(function* () {
        yield* (yield* ApiKeyStore).save(made.record)
        yield* (yield* AutomationAccounts).save({
          address: account,
          network: "anvil",
          accountKey: "crash",
          plan: {
            asset: zeroAddress,
            recipients: [{ address: recipient, shareBps: 10_000 }],
            minimumPayout: "1",
            reserve: "0"
          }
        })
        yield* (yield* AutomationAccounts).save({ address: bulk, network: "anvil", accountKey: "crash-bulk" })
      }).pipe(Effect.provide(Layer.fresh(RedisStores.layer({ url: redis.url, keyPrefix: PREFIX }))))
    )
    await chain.fund(account, 5_000n)
    await chain.fund(bulk, 5_000n)
  })
  afterAll(async () => {
    for (const one of processes) one.kill("SIGKILL")
    await proxy?.stop()
    await redis?.stop()
  })

  /** Starts a gateway process on the shared Redis, its bundler behind the proxy. */
  const startGateway = () =>
    startGatewayProcess(
      {
        REDIS_URL: redis.url,
        REDIS_PREFIX: PREFIX,
        PAYOUT_MASTER_SECRET: chain.masterSecret,
        PAYOUT_NETWORKS: JSON.stringify([devnetNetwork(chain.devnet, { bundlerUrl: proxy.url })])
      },
      processes
    )

  const payout = (base: string, idempotencyKey?: string, body: unknown = {}, from: Address = account) =>
    fetch(`${base}/v1/anvil/account/${from}/payout/disperse`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-api-key": key,
        ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey })
      },
      body: JSON.stringify(body)
    })

  /** Reads the payout until it is no longer `submitted` (20 s at most). */
  const settled = async (base: string, from: Address, answer: Record<string, unknown>) => {
    let status = answer
    const deadline = Date.now() + 20_000
    while (status.status === "submitted" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      const read = await fetch(`${base}/v1/anvil/account/${from}/payout/${String(answer.id)}`, {
        headers: { "x-api-key": key }
      })
      status = (await read.json()) as Record<string, unknown>
    }
    return status
  }

  it("is sent once, as it was recorded, by a retry with the same key on a restarted gateway", async () => {
    const first = await startGateway()
    let hung: () => void = () => {}
    const atTheBundler = new Promise<void>((resolve) => {
      hung = resolve
    })
    // The bundler never gets the operation: the process dies while its eth_sendUserOperation is on the way.
    proxy.set({ _tag: "hangOn", method: "eth_sendUserOperation", onHang: () => hung() })
    const request = payout(first.base, "crash-1").catch((error: unknown) => error)
    await atTheBundler
    first.process.kill("SIGKILL")
    // The client sees the connection drop: no answer, neither a success nor a problem.
    expect(await request).toMatchObject({ name: "TypeError", message: "fetch failed" })
    proxy.set({ _tag: "pass" })
    expect(await chain.executed(account)).toHaveLength(0)
    expect(await chain.balance(recipient)).toBe(0n)

    const second = await startGateway()
    const retried = await payout(second.base, "crash-1")
    expect(retried.status).toBe(200)
    const body = (await retried.json()) as Record<string, unknown>
    expect(body).toMatchObject({ status: "submitted", userOpHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) })
    const status = await settled(second.base, account, body)
    expect(status).toMatchObject({ status: "confirmed", userOpHash: body.userOpHash })
    const executed = await chain.executed(account)
    expect(executed.map((event) => event.args.userOpHash)).toEqual([body.userOpHash])
    expect(await chain.balance(recipient)).toBe(5_000n)

    // Again with the key: the same payout; without it: nothing left to pay.
    const again = (await (await payout(second.base, "crash-1")).json()) as Record<string, unknown>
    expect(again).toMatchObject({ id: body.id, userOpHash: body.userOpHash })
    const keyless = (await (await payout(second.base)).json()) as Record<string, unknown>
    expect(keyless.code).toBe("nothing_to_disperse")
    expect(await chain.executed(account)).toHaveLength(1)
  })

  it("pays a payout in several operations exactly once when its gateway dies between parts and a restarted one is retried with the key", async () => {
    // 200 native transfers: 3 operations within the default ceiling.
    const recipients = Array.from({ length: 200 }, () => getAddress(freshAddress()))
    const body = {
      assets: recipients.map(() => zeroAddress),
      amounts: recipients.map(() => "1"),
      recipients,
      unit: "base"
    }
    const first = await startGateway()
    let hung: () => void = () => {}
    const atTheBundler = new Promise<void>((resolve) => {
      hung = resolve
    })
    proxy.reset()
    // The first part reaches the bundler; the process dies while the second part's send is on the way.
    proxy.set({ _tag: "hangOn", method: "eth_sendUserOperation", skip: 1, onHang: () => hung() })
    const request = payout(first.base, "crash-bulk-1", body, bulk).catch((error: unknown) => error)
    await atTheBundler
    first.process.kill("SIGKILL")
    // The client sees the connection drop: no answer, neither a success nor a problem.
    expect(await request).toMatchObject({ name: "TypeError", message: "fetch failed" })
    proxy.set({ _tag: "pass" })
    const beforeRestart = proxy.calls().length

    const second = await startGateway()
    const retried = await payout(second.base, "crash-bulk-1", body, bulk)
    expect(retried.status).toBe(200)
    const answer = (await retried.json()) as Record<string, unknown>
    const operations = answer.operations as ReadonlyArray<{ userOpHash?: string }>
    expect(operations).toHaveLength(3)
    const status = await settled(second.base, bulk, answer)
    expect(status).toMatchObject({ id: answer.id, status: "confirmed" })

    const id = String(answer.id)
    const killed = partSends(proxy.calls().slice(0, beforeRestart), id, 3)
    const all = partSends(proxy.calls(), id, 3)
    // Before the kill: the first part sent, the second on its way, the third never signed.
    expect(killed.map((part) => part.sends)).toEqual([1, 1, 0])
    // Each part one signed operation, whoever sent it (re-sent as it was, never signed again), executed once.
    expect(all.map((part) => part.signed)).toEqual([1, 1, 1])
    const executed = await chain.executed(bulk)
    expect(executed.map((event) => event.args.userOpHash).sort()).toEqual(
      operations.map((operation) => operation.userOpHash).sort()
    )
    const balances = await Promise.all(recipients.map((recipient) => chain.balance(recipient)))
    expect(balances.every((balance) => balance === 1n)).toBe(true)

    // Again with the key: the same payout, nothing more sent or executed.
    const again = (await (await payout(second.base, "crash-bulk-1", body, bulk)).json()) as Record<string, unknown>
    expect(again).toMatchObject({ id: answer.id, hash: answer.hash })
    expect(await chain.executed(bulk)).toHaveLength(3)
  }, 90_000)
})
