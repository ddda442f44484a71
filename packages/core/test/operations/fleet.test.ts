// A fleet on a real network's terms (issue 21): three gateway processes (each its own HTTP server on 127.0.0.1, its
// own Redis connection) on one redis-server, one anvil and one alto, sending wallet batches of many users at once,
// some requests repeated with the same Idempotency-Key on another process. Every accepted operation must land
// exactly once (one UserOperationEvent per hash, each recipient paid once) with no two requests sharing an
// operation unless they share a key. The processes run the built packages (npm run build); the chain is the
// worker's devnet, the wallets this file's own (a fresh master secret).
import type { ChildProcess } from "node:child_process"
import { generateKeyPairSync } from "node:crypto"
import { identitySafe, testUserIdentity } from "@walletgate/core/operations"
import type { Address, Hash } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { phoneTestApp, registerApps } from "../../../store-redis/test/apps"
import { type RedisServer, startRedisServer } from "../../../store-redis/test/redis-server"
import { deriveOwnerKey } from "../../src/operations/KeyVault"
import { freshAddress, userOperationEvents } from "../devnet/shared"
import { devnetNetwork, startPayoutDevnet } from "../payout/fixture"
import { startGatewayProcess } from "../payout/gatewayProcess"

const PREFIX = "fleet-ops:"
const CLIENT = { clientId: "wgc_fleet_ops", clientSecret: "wgs_fleet_ops_secret" }
const GATEWAYS = 3
const USERS = 100
const OPERATIONS = 300
/** Requests that repeat an earlier one's Idempotency-Key (and body) on another process. */
const REPEATS = 60
/** Requests in flight at once, over the whole fleet. */
const CONCURRENCY = 48

/** Runs `work` over `items`, at most `limit` at once. */
const pool = async <A, B>(items: ReadonlyArray<A>, limit: number, work: (item: A) => Promise<B>) => {
  const results: Array<B> = new Array(items.length)
  let next = 0
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const index = next++
        results[index] = await work(items[index] as A)
      }
    })
  )
  return results
}

type Chain = Awaited<ReturnType<typeof startPayoutDevnet>>

describe("three gateway processes on one Redis, one chain and one bundler", { tags: ["devnet"] }, () => {
  let chain: Chain
  let redis: RedisServer
  const processes: Array<ChildProcess> = []
  const bases: Array<string> = []

  /** Starts a gateway process on the shared Redis; resolves with its base URL. */
  const startGateway = async (signingKey: string) =>
    (
      await startGatewayProcess(
        {
          REDIS_URL: redis.url,
          REDIS_PREFIX: PREFIX,
          PAYOUT_MASTER_SECRET: chain.masterSecret,
          // 300 operations of 100 new wallets reserve about 100 M gas, the default app budget of a test network's
          // hour: this test is about exactly once, so the app's budget is raised out of its way.
          PAYOUT_NETWORKS: JSON.stringify([{ ...devnetNetwork(chain.devnet), spend: { perApp: 400_000_000 } }]),
          GATEWAY_SIGNING_KEY: signingKey
        },
        processes
      )
    ).base

  beforeAll(async () => {
    ;[chain, redis] = await Promise.all([startPayoutDevnet(), startRedisServer()])
    // The app, registered once in Redis for every process.
    await registerApps({ url: redis.url, keyPrefix: PREFIX }, [phoneTestApp(CLIENT)])
    // One signing key for the fleet: a token issued by one process is accepted by the others.
    const signingKey = generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }).toString()
    bases.push(...(await Promise.all(Array.from({ length: GATEWAYS }, () => startGateway(signingKey)))))
  })
  afterAll(async () => {
    for (const one of processes) one.kill("SIGKILL")
    await redis?.stop()
  })

  it(`lands ${OPERATIONS} operations of ${USERS} users sent through ${GATEWAYS} processes exactly once, ${REPEATS} keys repeated across processes`, {
    timeout: 150_000
  }, async () => {
    const started = Date.now()
    const userIds = Array.from({ length: USERS }, (_, i) => `phone:fleet-${i}`)
    const wallets = userIds.map((userId) => {
      const identity = testUserIdentity(CLIENT.clientId, userId)
      return identitySafe(privateKeyToAccount(deriveOwnerKey(chain.masterSecret, identity)).address, identity).address
    })
    // The users' Safes (not deployed yet) hold ETH to send; the paymaster pays the gas.
    for (const wallet of wallets) await chain.devnet.setBalance(wallet, 10n ** 15n)
    const recipients = userIds.map(() => freshAddress())
    const granted = await fetch(`${bases[0]}/v1/auth`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: CLIENT.clientId, client_secret: CLIENT.clientSecret })
    })
    expect(granted.status).toBe(200)
    const bearer = `Bearer ${((await granted.json()) as { access_token: string }).access_token}`

    // Operation i: user i mod 100 pays its recipient i + 1 wei; key `op-i`, sent to process i mod 3. The repeats
    // send an earlier operation's key and body to the next process, at the same time as the first.
    const operations = Array.from({ length: OPERATIONS }, (_, i) => ({
      key: `op-${i}`,
      gateway: i % GATEWAYS,
      user: i % USERS,
      amount: BigInt(i + 1)
    }))
    const repeats = Array.from({ length: REPEATS }, (_, r) => {
      const original = operations[(r * 5) % OPERATIONS] as (typeof operations)[number]
      return { ...original, gateway: (original.gateway + 1) % GATEWAYS }
    })
    const requests = [...operations, ...repeats].sort((a, b) => Number(a.amount - b.amount))
    // A 503 (a store or the chain slower than its bound on this loaded machine) is retried with the same key, as a
    // client does: it either sent nothing or its key replays the operation, so exactly once must still hold.
    let retries = 0
    const answers = await pool(requests, CONCURRENCY, async (request) => {
      for (let attempt = 1; ; attempt++) {
        const response = await fetch(`${bases[request.gateway]}/v1/kernel/tx`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: bearer, "idempotency-key": request.key },
          body: JSON.stringify({
            userId: userIds[request.user],
            chain: "anvil",
            to: [recipients[request.user]],
            value: [String(request.amount)],
            data: ["0x"],
            auth: ""
          })
        })
        const body = (await response.json()) as Record<string, unknown>
        if (response.status !== 503 || attempt === 3) return { request, status: response.status, body }
        retries++
        await new Promise((resolve) => setTimeout(resolve, 500))
      }
    })
    const submittedMs = Date.now() - started
    expect(answers.filter((answer) => answer.status !== 200).map((answer) => answer.body)).toEqual([])

    // One operation per key, whichever process answered; two keys never share one (no collision).
    const byKey = new Map<string, { id: string; userOpHash: Hash }>()
    for (const answer of answers) {
      const sent = { id: String(answer.body.id), userOpHash: answer.body.userOpHash as Hash }
      const known = byKey.get(answer.request.key)
      if (known === undefined) byKey.set(answer.request.key, sent)
      else expect(sent).toEqual(known)
    }
    expect(byKey.size).toBe(OPERATIONS)
    const accepted = [...byKey.values()]
    const collisions = accepted.length - new Set(accepted.map((one) => one.userOpHash)).size
    expect(collisions).toBe(0)
    expect(new Set(accepted.map((one) => one.id)).size).toBe(OPERATIONS)

    // Status read when asked, on any process, until every operation is final.
    const pending = new Set(accepted.map((one) => one.id))
    const finals = new Map<string, string>()
    const deadline = Date.now() + 90_000
    let round = 0
    while (pending.size > 0 && Date.now() < deadline) {
      const ids = [...pending]
      await pool(ids, CONCURRENCY, async (id) => {
        const read = await fetch(`${bases[(round + id.length) % GATEWAYS]}/v1/kernel/tx/${id}`, {
          headers: { authorization: bearer }
        })
        const status = String(((await read.json()) as { status?: unknown }).status)
        if (status !== "submitted") {
          finals.set(id, status)
          pending.delete(id)
        }
      })
      round++
      if (pending.size > 0) await new Promise((resolve) => setTimeout(resolve, 250))
    }
    const finalMs = Date.now() - started
    const landed = [...finals.values()].filter((status) => status === "confirmed").length
    expect(landed).toBe(OPERATIONS)

    // Exactly once on the chain: one event per operation, and no other operation of these Safes.
    const events = await userOperationEvents(chain.devnet, {})
    const ours = new Set<string>(wallets.map((wallet) => wallet.toLowerCase()))
    const executed = events.filter((event) => ours.has(String(event.args.sender).toLowerCase()))
    const perHash = new Map<string, number>()
    for (const event of executed)
      perHash.set(String(event.args.userOpHash), (perHash.get(String(event.args.userOpHash)) ?? 0) + 1)
    expect(executed).toHaveLength(OPERATIONS)
    expect(accepted.every((one) => perHash.get(one.userOpHash) === 1)).toBe(true)
    for (const [user, recipient] of recipients.entries()) {
      const owed = operations.filter((op) => op.user === user).reduce((sum, op) => sum + op.amount, 0n)
      expect(await chain.devnet.publicClient.getBalance({ address: recipient as Address })).toBe(owed)
    }
    console.log(
      `fleet: ${GATEWAYS} processes, ${requests.length} requests (${REPEATS} repeated keys, ${retries} retried after a 503), ${OPERATIONS} operations accepted, ${landed} landed once, ${collisions} collisions; all answered in ${submittedMs} ms, all final in ${finalMs} ms`
    )
  })
})
