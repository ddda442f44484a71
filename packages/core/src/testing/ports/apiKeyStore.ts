import * as Effect from "effect/Effect"
import { type ApiKeyRecord, ApiKeyStore } from "../../payout/ApiKeys"
import { concurrently, countOf, expectEqual, type PortContractCase, T0 } from "./contract"

const ACCOUNT = "0x00000000000000000000000000000000000000b1"
/** A key record as `makeApiKey` makes it; `n` varies its id and hash. */
const record = (n: number, extra: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
  id: `key${String(n).padStart(9, "0")}`,
  mode: n % 2 === 0 ? "live" : "test",
  hash: n.toString(16).padStart(64, "0"),
  networks: ["anvil", "base-sepolia"],
  accounts: [ACCOUNT],
  createdAt: T0 + n,
  ...extra
})
const byId = (records: ReadonlyArray<ApiKeyRecord>) => [...records].sort((a, b) => a.id.localeCompare(b.id))

const keyCase = (
  name: string,
  run: (store: ApiKeyStore["Service"]) => Effect.Effect<void, unknown>
): PortContractCase<ApiKeyStore> => ({ name, run: ApiKeyStore.use(run) })

/** The contract of `ApiKeyStore` (docs/security.md): every implementation must pass every case. */
export const apiKeyStoreContract: ReadonlyArray<PortContractCase<ApiKeyStore>> = [
  keyCase("finds no record for an unknown id, and lists none", (store) =>
    Effect.gen(function* () {
      yield* expectEqual("find", yield* store.find(record(1).id), undefined)
      yield* expectEqual("list", yield* store.list, [])
    })
  ),
  keyCase("finds and lists saved records exactly as saved", (store) =>
    Effect.gen(function* () {
      const unscoped = record(2, { networks: [], accounts: [] })
      const used = record(3, { lastUsedAt: T0 + 100 })
      yield* Effect.forEach([record(1), unscoped, used], store.save)
      yield* expectEqual("find", yield* store.find(record(1).id), record(1))
      yield* expectEqual("find an unscoped key", yield* store.find(unscoped.id), unscoped)
      yield* expectEqual("list", byId(yield* store.list), [record(1), unscoped, used])
    })
  ),
  keyCase("replaces the whole record saved again under its id", (store) =>
    Effect.gen(function* () {
      yield* store.save(record(1))
      yield* store.touch(record(1).id, T0 + 500)
      const replaced = record(1, { networks: ["mainnet"], lastUsedAt: T0 + 50 })
      yield* store.save(replaced)
      yield* expectEqual("find", yield* store.find(record(1).id), replaced)
      yield* expectEqual("list", yield* store.list, [replaced])
    })
  ),
  keyCase("records the last use, and a later one over it", (store) =>
    Effect.gen(function* () {
      yield* store.save(record(1))
      yield* store.touch(record(1).id, T0 + 100)
      yield* expectEqual("after a use", yield* store.find(record(1).id), record(1, { lastUsedAt: T0 + 100 }))
      yield* store.touch(record(1).id, T0 + 200)
      yield* expectEqual("after another", yield* store.find(record(1).id), record(1, { lastUsedAt: T0 + 200 }))
    })
  ),
  keyCase("records no use of an unknown id", (store) =>
    Effect.gen(function* () {
      yield* store.touch(record(1).id, T0)
      yield* expectEqual("find", yield* store.find(record(1).id), undefined)
      yield* expectEqual("list", yield* store.list, [])
    })
  ),
  keyCase("revokes a live key once, and keeps the first revocation time", (store) =>
    Effect.gen(function* () {
      yield* store.save(record(1))
      yield* expectEqual("first revoke", yield* store.revoke(record(1).id, T0 + 100), true)
      yield* expectEqual("second revoke", yield* store.revoke(record(1).id, T0 + 200), false)
      yield* expectEqual("find", yield* store.find(record(1).id), record(1, { revokedAt: T0 + 100 }))
    })
  ),
  keyCase("revokes nothing for an unknown id", (store) =>
    Effect.gen(function* () {
      yield* expectEqual("revoke", yield* store.revoke(record(1).id, T0), false)
      yield* expectEqual("list", yield* store.list, [])
    })
  ),
  keyCase("keeps a revocation when the key is used later", (store) =>
    Effect.gen(function* () {
      yield* store.save(record(1, { lastUsedAt: T0 }))
      yield* store.revoke(record(1).id, T0 + 100)
      yield* store.touch(record(1).id, T0 + 200)
      yield* expectEqual(
        "find",
        yield* store.find(record(1).id),
        record(1, { lastUsedAt: T0 + 200, revokedAt: T0 + 100 })
      )
    })
  ),
  keyCase("keeps keys apart", (store) =>
    Effect.gen(function* () {
      yield* Effect.forEach([record(1), record(2)], store.save)
      yield* store.touch(record(1).id, T0 + 100)
      yield* store.revoke(record(1).id, T0 + 200)
      yield* expectEqual("other key", yield* store.find(record(2).id), record(2))
      yield* expectEqual("list", byId(yield* store.list), [
        record(1, { lastUsedAt: T0 + 100, revokedAt: T0 + 200 }),
        record(2)
      ])
    })
  ),
  keyCase("revokes a key exactly once among 20 concurrent revocations", (store) =>
    Effect.gen(function* () {
      yield* store.save(record(1))
      const revoked = yield* concurrently(20, (i) => store.revoke(record(1).id, T0 + i))
      yield* expectEqual("revoked", countOf(revoked, true), 1)
      const found = yield* store.find(record(1).id)
      const winner = revoked.indexOf(true)
      yield* expectEqual("revocation time of the winner", found?.revokedAt, T0 + winner)
    })
  ),
  keyCase("never loses a revocation to 20 concurrent uses", (store) =>
    Effect.gen(function* () {
      yield* store.save(record(1))
      const revoked = yield* Effect.all(
        [
          concurrently(20, (i) => store.touch(record(1).id, T0 + i)),
          store.revoke(record(1).id, T0 + 1000),
          concurrently(20, (i) => store.touch(record(1).id, T0 + 20 + i))
        ],
        { concurrency: "unbounded" }
      )
      yield* expectEqual("revoked", revoked[1], true)
      const found = yield* store.find(record(1).id)
      yield* expectEqual("revocation kept", found?.revokedAt, T0 + 1000)
      yield* expectEqual("a use recorded", typeof found?.lastUsedAt, "number")
    })
  )
]
