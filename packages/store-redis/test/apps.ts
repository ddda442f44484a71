// Apps registered in Redis as an operator does once, for every gateway process or Lambda container that reads it.
import { type App, ClientStore } from "@walletgate/core"
import { hashClientSecret } from "@walletgate/core/auth"
import { RedisStores, type RedisStoresOptions } from "@walletgate/redis"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** A test-mode app granted `phone` sign-in, for the client id and secret a test calls with. */
export const phoneTestApp = (client: { readonly clientId: string; readonly clientSecret: string }): App => ({
  clientId: client.clientId,
  secretHash: hashClientSecret(client.clientSecret),
  providers: ["phone"],
  testMode: true
})

/** Saves `apps` in the Redis of `options` over a connection of its own, closed once they are saved. */
export const registerApps = (options: RedisStoresOptions, apps: ReadonlyArray<App>): Promise<void> =>
  Effect.runPromise(
    Effect.forEach(apps, (app) => ClientStore.use((store) => store.save(app)), { discard: true }).pipe(
      Effect.provide(Layer.fresh(RedisStores.layer(options)))
    )
  )
