import type { ChildProcess } from "node:child_process"
import { ApiKeyStore, AutomationAccounts, SecureRandom } from "@walletgate/core"
import { automationIdentity, deriveOwnerKey } from "@walletgate/core/operations"
import { automationSafe, makeApiKey } from "@walletgate/core/payout"
import { RedisStores } from "@walletgate/redis"
import { Effect, Layer } from "effect"
import { type Address, getAddress, zeroAddress } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RedisServer, startRedisServer } from "../../../store-redis/test/redis-server"
import { startRpcProxy } from "../devnet/rpcProxy"
import { freshAddress } from "../devnet/shared"
import { devnetNetwork, startPayoutDevnet } from "./fixture"
import { startGatewayProcess } from "./gatewayProcess"

// A gateway process killed (SIGKILL) after it recorded a payout's signed operation and linked it to the
// Idempotency-Key, before the bundler got it; another process on the same Redis, retried with the same key, sends
// that same operation (same hash) and the EntryPoint executes it once. The processes run the built packages.
const PREFIX = "crash:"

type Chain = Awaited<ReturnType<typeof startPayoutDevnet>>

describe("a payout whose gateway process dies between recording and sending", () => {
  let chain: Chain
  let redis: RedisServer
  let proxy: Awaited<ReturnType<typeof startRpcProxy>>
  let key = ""
  let account: Address
  const recipient = getAddress(freshAddress())
  const processes: Array<ChildProcess> = []

  beforeAll(async () => {
    chain = await startPayoutDevnet()
    redis = await startRedisServer()
    proxy = await startRpcProxy(chain.devnet.bundlerUrl)
    const owner = privateKeyToAccount(deriveOwnerKey(chain.masterSecret, automationIdentity("crash"))).address
    account = automationSafe(owner, { accountKey: "crash" }).address
    const made = Effect.runSync(
      makeApiKey({ mode: "test", networks: ["anvil"], accounts: [account] }).pipe(Effect.provide(SecureRandom.crypto))
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
      }).pipe(Effect.provide(Layer.fresh(RedisStores.layer({ url: redis.url, keyPrefix: PREFIX }))))
    )
    await chain.fund(account, 5_000n)
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

  const payout = (base: string, idempotencyKey?: string) =>
    fetch(`${base}/v1/anvil/account/${account}/payout/disperse`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-api-key": key,
        ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey })
      },
      body: "{}"
    })

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
    expect(await request).toBeInstanceOf(Error)
    proxy.set({ _tag: "pass" })
    expect(await chain.executed(account)).toHaveLength(0)
    expect(await chain.balance(recipient)).toBe(0n)

    const second = await startGateway()
    const retried = await payout(second.base, "crash-1")
    expect(retried.status).toBe(200)
    const body = (await retried.json()) as Record<string, unknown>
    expect(body).toMatchObject({ status: "submitted", userOpHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) })
    let status: Record<string, unknown> = body
    const deadline = Date.now() + 20_000
    while (status.status === "submitted" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      const read = await fetch(`${second.base}/v1/anvil/account/${account}/payout/${String(body.id)}`, {
        headers: { "x-api-key": key }
      })
      status = (await read.json()) as Record<string, unknown>
    }
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
})
