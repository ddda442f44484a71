import { App, ClientStore } from "@walletgate/core/auth"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Connection } from "./connection"

// One string per app, `{app:<client id>}`: the app as JSON (its secret only as a hash), kept forever.
//
// `{apps}` = the set of client ids, for listing. It lies in another Cluster slot than the apps, so no script can
// write both at once: an id is added before its app is written (save, replace) and removed after its app is
// deleted, so every app is in the set, and an id whose app never came or is gone is skipped when listed.
const AppJson = Schema.fromJsonString(App)
const encodeApp = Schema.encodeSync(AppJson)

/** `ClientStore` on Redis: each app under its client id; a value that is not an app is `StoreUnavailable`. */
export const redisClientStore = (connection: Connection): ClientStore["Service"] => {
  const appKey = (clientId: string) => `${connection.keyPrefix}{app:${clientId}}`
  const indexKey = `${connection.keyPrefix}{apps}`
  const index = (operation: string, clientId: string) =>
    connection.send(operation, (client) => client.sadd(indexKey, clientId), Schema.Number)
  const find = (clientId: string) =>
    connection
      .send("ClientStore.find", (client) => client.get(appKey(clientId)), Schema.NullOr(AppJson))
      .pipe(Effect.map((app) => app ?? undefined))
  return ClientStore.of({
    find,
    save: (app) =>
      index("ClientStore.save", app.clientId).pipe(
        Effect.andThen(
          Effect.suspend(() =>
            connection.send(
              "ClientStore.save",
              (client) => client.set(appKey(app.clientId), encodeApp(app)),
              Schema.Literal("OK")
            )
          )
        ),
        Effect.asVoid
      ),
    // `SET … XX` writes only over an app still there: a change racing a removal never brings the app back.
    replace: (app) =>
      index("ClientStore.replace", app.clientId).pipe(
        Effect.andThen(
          Effect.suspend(() =>
            connection.send(
              "ClientStore.replace",
              (client) => client.set(appKey(app.clientId), encodeApp(app), "XX"),
              Schema.NullOr(Schema.Literal("OK"))
            )
          )
        ),
        Effect.map((reply) => reply === "OK")
      ),
    remove: (clientId) =>
      connection
        .send("ClientStore.remove", (client) => client.del(appKey(clientId)), Schema.Number)
        .pipe(
          Effect.andThen(
            connection.send("ClientStore.remove", (client) => client.srem(indexKey, clientId), Schema.Number)
          ),
          Effect.asVoid
        ),
    list: connection
      .send("ClientStore.list", (client) => client.smembers(indexKey), Schema.Array(Schema.String))
      .pipe(
        Effect.flatMap((ids) => Effect.forEach(ids, find, { concurrency: 16 })),
        Effect.map((apps) => apps.filter((app) => app !== undefined))
      )
  })
}
