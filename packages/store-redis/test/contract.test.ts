import {
  accountLocksContract,
  apiKeyStoreContract,
  automationAccountsContract,
  clientStoreContract,
  expiringAccountLocksContract,
  gasLedgerContract,
  idempotencyStoreContract,
  otpStoreContract,
  type PortContractCase,
  rateLimiterContract,
  transactionLogContract,
  userStoreContract
} from "@walletgate/core/testing"
import { type RedisStorePorts, RedisStores, type RedisStoresOptions } from "@walletgate/redis"
import { Effect } from "effect"
import { Cluster } from "ioredis"
import { afterAll, beforeAll, describe, it } from "vitest"
import { type RedisServer, startRedisServer } from "./redis-server"

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
}

describe("RedisStores on redis-server", () => {
  let server: RedisServer
  beforeAll(async () => {
    server = await startRedisServer()
  })
  afterAll(() => server?.stop())
  runContracts((keyPrefix) => ({ url: server.url, keyPrefix }))
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
