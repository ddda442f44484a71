import * as Effect from "effect/Effect"
import type { App } from "../../auth/apps"
import { ClientStore } from "../../auth/ClientStore"
import { concurrently, expectEqual, type PortContractCase } from "./contract"

/** A stand-in for a secret hash: 64 hex digits, as `hashClientSecret` makes them. */
const digest = (n: number) => n.toString(16).padStart(64, "0")
const app = (clientId: string, n = 1): App => ({
  clientId,
  secretHash: digest(n),
  providers: ["phone"],
  testMode: n % 2 === 1
})
const WITH_GRANTS: App = {
  clientId: "wgc_jwks",
  secretHash: digest(7),
  providers: ["phone", "acme-id_2"],
  testMode: false
}

const clientCase = (
  name: string,
  run: (store: ClientStore["Service"]) => Effect.Effect<void, unknown>
): PortContractCase<ClientStore> => ({ name, run: ClientStore.use(run) })

/** The contract of `ClientStore` (the registered apps): every implementation must pass every case. */
export const clientStoreContract: ReadonlyArray<PortContractCase<ClientStore>> = [
  clientCase("finds no app for an unknown client id", (store) =>
    Effect.gen(function* () {
      yield* expectEqual("find", yield* store.find("wgc_unknown"), undefined)
    })
  ),
  clientCase("finds a saved app exactly as saved, its provider grants included", (store) =>
    Effect.gen(function* () {
      yield* store.save(app("wgc_one"))
      yield* store.save(WITH_GRANTS)
      yield* expectEqual("phone only", yield* store.find("wgc_one"), app("wgc_one"))
      yield* expectEqual("with two grants", yield* store.find(WITH_GRANTS.clientId), WITH_GRANTS)
    })
  ),
  clientCase("replaces an app saved again under its client id", (store) =>
    Effect.gen(function* () {
      yield* store.save(WITH_GRANTS)
      const replaced = { ...app(WITH_GRANTS.clientId, 2), providers: [] }
      yield* store.save(replaced)
      yield* expectEqual("find", yield* store.find(WITH_GRANTS.clientId), replaced)
    })
  ),
  clientCase("forgets a removed app, and removes an unknown one harmlessly", (store) =>
    Effect.gen(function* () {
      yield* store.save(app("wgc_one"))
      yield* store.remove("wgc_one")
      yield* store.remove("wgc_unknown")
      yield* expectEqual("find", yield* store.find("wgc_one"), undefined)
    })
  ),
  clientCase("keeps apps apart", (store) =>
    Effect.gen(function* () {
      yield* store.save(app("wgc_one", 1))
      yield* store.save(app("wgc_two", 2))
      yield* store.remove("wgc_one")
      yield* expectEqual("other app", yield* store.find("wgc_two"), app("wgc_two", 2))
    })
  ),
  clientCase("lists every app saved, as saved, and no removed one", (store) =>
    Effect.gen(function* () {
      yield* expectEqual("none yet", yield* store.list, [])
      const named: App = { ...app("wgc_named", 3), name: "Shop", createdAt: 1_700_000_000_000, gasPerDay: 5_000_000 }
      yield* store.save(app("wgc_one"))
      yield* store.save(WITH_GRANTS)
      yield* store.save(named)
      yield* store.save(app("wgc_gone"))
      yield* store.remove("wgc_gone")
      const listed = [...(yield* store.list)].sort((a, b) => (a.clientId < b.clientId ? -1 : 1))
      yield* expectEqual("listed", listed, [WITH_GRANTS, named, app("wgc_one")])
    })
  ),
  clientCase("replaces a registered app, and never brings back one that is not registered", (store) =>
    Effect.gen(function* () {
      yield* store.save(app("wgc_one"))
      const changed = { ...app("wgc_one", 2), providers: ["phone", "acme-id_2"] }
      yield* expectEqual("replaced", yield* store.replace(changed), true)
      yield* expectEqual("found", yield* store.find("wgc_one"), changed)
      yield* expectEqual("unknown", yield* store.replace(app("wgc_unknown")), false)
      yield* expectEqual("not created", yield* store.find("wgc_unknown"), undefined)
      yield* store.remove("wgc_one")
      yield* expectEqual("removed", yield* store.replace(changed), false)
      yield* expectEqual("stays removed", yield* store.find("wgc_one"), undefined)
      yield* expectEqual("not listed", yield* store.list, [])
    })
  ),
  clientCase("keeps every one of 20 apps saved concurrently", (store) =>
    Effect.gen(function* () {
      yield* concurrently(20, (i) => store.save(app(`wgc_${i}`, i)))
      const found = yield* Effect.forEach(
        Array.from({ length: 20 }, (_, i) => i),
        (i) => store.find(`wgc_${i}`)
      )
      yield* expectEqual(
        "found",
        found,
        Array.from({ length: 20 }, (_, i) => app(`wgc_${i}`, i))
      )
      yield* expectEqual("listed", (yield* store.list).length, 20)
    })
  )
]
