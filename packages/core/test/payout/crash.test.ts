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
import { planTurnId } from "../../src/payout/planning"
import { startRpcProxy } from "../devnet/rpcProxy"
import { freshAddress } from "../devnet/shared"
import {
  automationAddress,
  devnetNetwork,
  partSends,
  payoutPartNonces,
  planPartNonces,
  startPayoutDevnet,
  untilExecuted
} from "./fixture"
import { startGatewayProcess } from "./gatewayProcess"

// A gateway process killed (SIGKILL) after it recorded a payout's signed operation and linked it to the
// Idempotency-Key, before the bundler got it; another process on the same Redis, retried with the same key, sends
// that same operation (same hash) and the EntryPoint executes it once. Likewise for a payout in several operations
// killed between its parts: the retry sends the rest, each part once; and for a plan payout (`{}`) of several
// operations, whose next `{}` without a key finishes the turn first. The processes run the built packages.
const PREFIX = "crash:"
/** What a client whose gateway was killed mid-request sees: the connection dropped, neither a success nor a problem. */
const CONNECTION_DROPPED = { name: "TypeError", message: "fetch failed" }

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
  /** Accounts whose plan pays 250 recipients natively: 3 operations per turn within the default ceiling. */
  const plans = { keyed: zeroAddress as Address, keyless: zeroAddress as Address }
  const planRecipients = {
    keyed: Array.from({ length: 250 }, () => getAddress(freshAddress())),
    keyless: Array.from({ length: 250 }, () => getAddress(freshAddress()))
  }
  const processes: Array<ChildProcess> = []

  beforeAll(async () => {
    chain = await startPayoutDevnet()
    redis = await startRedisServer()
    proxy = await startRpcProxy(chain.devnet.bundlerUrl)
    const owner = privateKeyToAccount(deriveOwnerKey(chain.masterSecret, automationIdentity("crash"))).address
    account = automationSafe(owner, { accountKey: "crash" }).address
    const bulkOwner = privateKeyToAccount(deriveOwnerKey(chain.masterSecret, automationIdentity("crash-bulk"))).address
    bulk = automationSafe(bulkOwner, { accountKey: "crash-bulk" }).address
    plans.keyed = automationAddress(chain.masterSecret, "crash-plan-keyed")
    plans.keyless = automationAddress(chain.masterSecret, "crash-plan-keyless")
    const made = Effect.runSync(
      makeApiKey({ mode: "test", networks: ["anvil"], accounts: [account, bulk, plans.keyed, plans.keyless] }).pipe(
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
        for (const name of ["keyed", "keyless"] as const) {
          yield* (yield* AutomationAccounts).save({
            address: plans[name],
            network: "anvil",
            accountKey: `crash-plan-${name}`,
            plan: {
              asset: zeroAddress,
              recipients: planRecipients[name].map((address) => ({ address, shareBps: 40 })),
              minimumPayout: "1",
              reserve: "0"
            }
          })
        }
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

  /**
   * Starts a gateway, sends it `request` and kills it (SIGKILL) while the bundler's `eth_sendUserOperation` number
   * `skip` (from 0: the earlier ones reach it) is on its way; the proxy passes everything again after. Resolves with
   * what the client saw.
   */
  const killedWhileSending = async (request: (base: string) => Promise<Response>, skip = 0) => {
    const gateway = await startGateway()
    let hung: () => void = () => {}
    const atTheBundler = new Promise<void>((resolve) => {
      hung = resolve
    })
    proxy.set({ _tag: "hangOn", method: "eth_sendUserOperation", skip, onHang: () => hung() })
    const answer = request(gateway.base).catch((error: unknown) => error)
    await atTheBundler
    gateway.process.kill("SIGKILL")
    const seen = await answer
    proxy.set({ _tag: "pass" })
    return seen
  }

  it("is sent once, as it was recorded, by a retry with the same key on a restarted gateway", async () => {
    // The bundler never gets the operation: the process dies while its eth_sendUserOperation is on the way.
    const request = await killedWhileSending((base) => payout(base, "crash-1"))
    // The client sees the connection drop: no answer, neither a success nor a problem.
    expect(request).toMatchObject(CONNECTION_DROPPED)
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
    proxy.reset()
    // The first part reaches the bundler; the process dies while the second part's send is on the way.
    const request = await killedWhileSending((base) => payout(base, "crash-bulk-1", body, bulk), 1)
    // The client sees the connection drop: no answer, neither a success nor a problem.
    expect(request).toMatchObject(CONNECTION_DROPPED)
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
    const killed = partSends(proxy.calls().slice(0, beforeRestart), payoutPartNonces(id, 3))
    const all = partSends(proxy.calls(), payoutPartNonces(id, 3))
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

  /** What each recipient of a plan turn paying `funds` gets: 40 bps of it. */
  const planShare = (funds: bigint) => (funds * 40n) / 10_000n
  const planBalances = (name: keyof typeof plans) => Promise.all(planRecipients[name].map((one) => chain.balance(one)))

  it("pays a plan payout (`{}`) in several operations exactly once when its gateway dies while part 1 is on its way and a restarted one is retried with the key", async () => {
    await chain.fund(plans.keyed, 250_000n)
    proxy.reset()
    // Part 0 reaches the bundler; the process dies while part 1's send is on the way, part 2 never signed.
    const request = await killedWhileSending((base) => payout(base, "crash-plan-1", {}, plans.keyed), 1)
    expect(request).toMatchObject(CONNECTION_DROPPED)
    const beforeRestart = proxy.calls().length

    const second = await startGateway()
    const retried = await payout(second.base, "crash-plan-1", {}, plans.keyed)
    expect(retried.status).toBe(200)
    const answer = (await retried.json()) as Record<string, unknown>
    const operations = answer.operations as ReadonlyArray<{ userOpHash?: string }>
    expect(operations).toHaveLength(3)
    expect(await settled(second.base, plans.keyed, answer)).toMatchObject({ id: answer.id, status: "confirmed" })

    // The account's first turn: part 0 at sequence 0 of the plan payout key, parts 1 and 2 on the turn's keys.
    const nonces = planPartNonces(plans.keyed, 0n, 3)
    expect(partSends(proxy.calls().slice(0, beforeRestart), nonces).map((part) => part.sends)).toEqual([1, 1, 0])
    // Each part one signed operation, whoever sent it (re-sent as it was, never signed again), executed once.
    expect(partSends(proxy.calls(), nonces).map((part) => part.signed)).toEqual([1, 1, 1])
    const executed = await chain.executed(plans.keyed)
    expect(executed.map((event) => event.args.userOpHash).sort()).toEqual(
      operations.map((operation) => operation.userOpHash).sort()
    )
    expect((await planBalances("keyed")).every((balance) => balance === planShare(250_000n))).toBe(true)

    // Again with the key: the same payout, nothing more sent or executed.
    const again = (await (await payout(second.base, "crash-plan-1", {}, plans.keyed)).json()) as Record<string, unknown>
    expect(again).toMatchObject({ id: answer.id, hash: answer.hash })
    expect(await chain.executed(plans.keyed)).toHaveLength(3)
  }, 90_000)

  it("finishes a plan turn its killed gateway left unsent before a keyless `{}` on a restarted gateway starts the next, paying no recipient twice", async () => {
    await chain.fund(plans.keyless, 250_000n)
    proxy.reset()
    const request = await killedWhileSending((base) => payout(base, undefined, {}, plans.keyless), 1)
    expect(request).toMatchObject(CONNECTION_DROPPED)
    const beforeRestart = proxy.calls().length
    // Part 0 reached the bundler: once it executes, the turn is taken and the account's next `{}` is the next turn's.
    expect(await untilExecuted(chain, plans.keyless, 1)).toHaveLength(1)

    const second = await startGateway()
    // The next turn waits for this one: its unsent part sent, its lost one re-sent, the answer 409 meanwhile.
    const next = await payout(second.base, undefined, {}, plans.keyless)
    expect([next.status, ((await next.json()) as Record<string, unknown>).code]).toEqual([409, "payout_in_progress"])
    expect(next.headers.get("retry-after")).toBe("2")
    const turn = planTurnId(chain.devnet.network.chainId, plans.keyless, 0n)
    const killedTurn = await settled(second.base, plans.keyless, { id: turn, status: "submitted" })
    expect(killedTurn).toMatchObject({ id: turn, status: "confirmed" })
    const nonces = planPartNonces(plans.keyless, 0n, 3)
    expect(partSends(proxy.calls().slice(0, beforeRestart), nonces).map((part) => part.sends)).toEqual([1, 1, 0])
    expect(partSends(proxy.calls(), nonces).map((part) => part.signed)).toEqual([1, 1, 1])
    expect(await chain.executed(plans.keyless)).toHaveLength(3)
    const share = planShare(250_000n)
    expect((await planBalances("keyless")).every((balance) => balance === share)).toBe(true)

    // The turn settled, the next `{}` is a new turn: a new payout of what arrived since.
    await chain.fund(plans.keyless, 500_000n)
    const newTurn = await payout(second.base, undefined, {}, plans.keyless)
    expect(newTurn.status).toBe(200)
    const body = (await newTurn.json()) as Record<string, unknown>
    expect(body.id).toBe(planTurnId(chain.devnet.network.chainId, plans.keyless, 1n))
    // Final: every part executed once and paid (each part is signed with at least its counted call gas).
    expect((await settled(second.base, plans.keyless, body)).status).toBe("confirmed")
    const executed = await chain.executed(plans.keyless)
    expect(executed.map((event) => event.args.success)).toEqual([true, true, true, true, true, true])
    const twice = share + planShare(500_000n)
    expect((await planBalances("keyless")).every((balance) => balance === twice)).toBe(true)
  }, 120_000)
})
