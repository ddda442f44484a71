import { OrderIndex } from "@walletgate/core"
import type { IndexBatch } from "@walletgate/core/sweeper"
import {
  accountLocksContract,
  apiKeyStoreContract,
  auditLogContract,
  automationAccountsContract,
  clientStoreContract,
  expiringAccountLocksContract,
  gasLedgerContract,
  idempotencyStoreContract,
  orderIndexContract,
  otpStoreContract,
  type PortContractCase,
  rateLimiterContract,
  transactionLogContract,
  userStoreContract
} from "@walletgate/core/testing"
import { type RedisStorePorts, RedisStores, type RedisStoresOptions } from "@walletgate/redis"
import { Effect, ManagedRuntime } from "effect"
import { Cluster } from "ioredis"
import type { Address } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RedisServer, startRedisServer } from "./redis-server"

const HOLDER: Address = "0x52908400098527886E0F7030069857D2E4169EE7"
const OTHER: Address = "0x000000000000000000000000000000000000dEaD"
const TOKEN: Address = "0x00000000000000000000000000000000000000C0"

// The same contract cases as the in-memory ports (packages/core/test/ports), on a real redis-server.
let fresh = 0
const runContracts = (connection: (keyPrefix: string) => RedisStoresOptions) => {
  const suite = (port: string, cases: ReadonlyArray<PortContractCase<RedisStorePorts>>) =>
    describe(port, () => {
      for (const { name, run } of cases) {
        // A key prefix of its own per case: cases share the server but never a key.
        it(name, () => Effect.runPromise(Effect.provide(run, RedisStores.layer(connection(`case${++fresh}:`)))))
      }
    })
  suite("OtpStore", otpStoreContract)
  suite("UserStore", userStoreContract)
  suite("RateLimiter", rateLimiterContract)
  suite("ClientStore", clientStoreContract)
  suite("ApiKeyStore", apiKeyStoreContract)
  suite("AutomationAccounts", automationAccountsContract)
  suite("IdempotencyStore", idempotencyStoreContract)
  suite("AccountLocks", [...accountLocksContract, ...expiringAccountLocksContract])
  suite("TransactionLog", transactionLogContract)
  suite("GasLedger", gasLedgerContract)
  suite("OrderIndex", orderIndexContract)
  suite("AuditLog", auditLogContract)
}

describe("RedisStores on redis-server", () => {
  let server: RedisServer
  beforeAll(async () => {
    server = await startRedisServer()
  })
  afterAll(() => server?.stop())
  runContracts((keyPrefix) => ({ url: server.url, keyPrefix }))

  it("OrderIndex: two instances read one index, and a batch both try to apply is applied once", async () => {
    const [a, b] = [0, 1].map(() =>
      ManagedRuntime.make(RedisStores.layer({ url: server.url, keyPrefix: "fleet-index:" }))
    )
    if (a === undefined || b === undefined) throw new Error("two instances")
    try {
      const batch = (after: bigint | undefined, toBlock: bigint, holder: Address): IndexBatch => ({
        after,
        toBlock,
        approvals: [],
        sweeps: [],
        transfers: [{ token: TOKEN, from: holder, to: TOKEN, time: Number(toBlock) }]
      })
      expect(await a.runPromise(OrderIndex.use((index) => index.record("net:1", batch(undefined, 9n, HOLDER))))).toBe(
        true
      )
      // The other instance continues from where the first left off; it never applies the first's batch again.
      expect(await b.runPromise(OrderIndex.use((index) => index.cursor("net:1")))).toBe(9n)
      expect(await b.runPromise(OrderIndex.use((index) => index.record("net:1", batch(undefined, 9n, OTHER))))).toBe(
        false
      )
      const both = await Promise.all(
        [a, b].map((instance, i) =>
          instance.runPromise(
            OrderIndex.use((index) => index.record("net:1", batch(9n, 20n, i === 0 ? HOLDER : OTHER)))
          )
        )
      )
      expect(both.filter(Boolean)).toHaveLength(1)
      const seen = await b.runPromise(OrderIndex.use((index) => index.lastTransfers("net:1", both[0] ? HOLDER : OTHER)))
      expect([...seen]).toEqual([[TOKEN.toLowerCase(), 20]])
      // The losing batch left nothing: its holder keeps what earlier batches gave it (HOLDER: the first batch's
      // transfer at block 9; OTHER: none), whichever instance won.
      const loser = both[0] ? OTHER : HOLDER
      const notSeen = await a.runPromise(OrderIndex.use((index) => index.lastTransfers("net:1", loser)))
      expect([...notSeen]).toEqual(loser === HOLDER ? [[TOKEN.toLowerCase(), 9]] : [])
    } finally {
      await Promise.all([a.dispose(), b.dispose()])
    }
  })
})

// A one-node Redis Cluster refuses a script whose keys lie in more than one slot (CROSSSLOT), so passing
// here shows that every script keeps to one slot.
describe("RedisStores on a one-node Redis Cluster", () => {
  let server: RedisServer
  let cluster: Cluster
  beforeAll(async () => {
    server = await startRedisServer({ cluster: true })
    cluster = new Cluster([{ host: "127.0.0.1", port: server.port }], { enableOfflineQueue: false })
    await new Promise<void>((resolve, reject) => {
      cluster.once("ready", resolve)
      cluster.once("error", reject)
    })
  })
  afterAll(async () => {
    await cluster?.quit()
    await server?.stop()
  })
  runContracts((keyPrefix) => ({ client: cluster, keyPrefix }))
})
