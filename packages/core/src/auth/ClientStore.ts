import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { StoreUnavailable } from "../state/errors"
import type { App } from "./apps"

/** The registered apps (API clients). */
export class ClientStore extends Context.Service<
  ClientStore,
  {
    /** The app with this client id, if any. */
    readonly find: (clientId: string) => Effect.Effect<App | undefined, StoreUnavailable>
    /** Registers or replaces an app. */
    readonly save: (app: App) => Effect.Effect<void, StoreUnavailable>
    /**
     * Replaces an app that is still registered; returns `false` (and writes nothing) when it is not, so that a
     * change made after a concurrent removal can never bring a revoked app back.
     */
    readonly replace: (app: App) => Effect.Effect<boolean, StoreUnavailable>
    /** Every registered app (an operator's listing: a deployment has tens or hundreds, not millions). */
    readonly list: Effect.Effect<ReadonlyArray<App>, StoreUnavailable>
    /** Removes an app; its access tokens stop working at once. */
    readonly remove: (clientId: string) => Effect.Effect<void, StoreUnavailable>
  }
>()("@walletgate/core/ClientStore") {
  /** Apps in this process's memory, seeded with `apps`. */
  static readonly memory = (apps: ReadonlyArray<App> = []): Layer.Layer<ClientStore> =>
    Layer.sync(ClientStore, () => {
      const byId = new Map(apps.map((app) => [app.clientId, app]))
      return ClientStore.of({
        find: (clientId) => Effect.sync(() => byId.get(clientId)),
        save: (app) =>
          Effect.sync(() => {
            byId.set(app.clientId, app)
          }),
        replace: (app) =>
          Effect.sync(() => {
            if (!byId.has(app.clientId)) return false
            byId.set(app.clientId, app)
            return true
          }),
        list: Effect.sync(() => [...byId.values()]),
        remove: (clientId) =>
          Effect.sync(() => {
            byId.delete(clientId)
          })
      })
    })
}
