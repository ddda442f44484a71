import { App, ClientStore } from "@walletgate/core/auth"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Connection } from "./connection"

// One string per app, `{app:<client id>}`: the app as JSON (its secret only as a hash), kept forever.
const AppJson = Schema.fromJsonString(App)
const encodeApp = Schema.encodeSync(AppJson)

/** `ClientStore` on Redis: each app under its client id; a value that is not an app is `StoreUnavailable`. */
export const redisClientStore = (connection: Connection): ClientStore["Service"] => {
  const appKey = (clientId: string) => `${connection.keyPrefix}{app:${clientId}}`
  return ClientStore.of({
    find: (clientId) =>
      connection
        .send("ClientStore.find", (client) => client.get(appKey(clientId)), Schema.NullOr(AppJson))
        .pipe(Effect.map((app) => app ?? undefined)),
    save: (app) =>
      Effect.suspend(() =>
        connection.send(
          "ClientStore.save",
          (client) => client.set(appKey(app.clientId), encodeApp(app)),
          Schema.Literal("OK")
        )
      ).pipe(Effect.asVoid),
    remove: (clientId) =>
      connection.send("ClientStore.remove", (client) => client.del(appKey(clientId)), Schema.Number).pipe(Effect.asVoid)
  })
}
