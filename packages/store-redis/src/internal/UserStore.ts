import { User, type UserId, UserStore } from "@walletgate/core/otp"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type Connection, luaScript } from "./connection"

// Users are kept forever under one hash tag, `{users}`: the phone index and the id index change in one
// script, and a script may only touch one Redis Cluster slot. A user is about 150 bytes, so that slot
// holds tens of millions of users before it needs a node of its own.
const findOrCreate = luaScript(`
local existing = redis.call("GET", KEYS[1])
if existing then return existing end
if redis.call("EXISTS", KEYS[2]) == 1 then return redis.error_reply("user id already taken") end
redis.call("SET", KEYS[1], ARGV[1])
redis.call("SET", KEYS[2], ARGV[1])
return ARGV[1]
`)

const UserJson = Schema.fromJsonString(User)
const encodeUser = Schema.encodeSync(UserJson)

/** `UserStore` on Redis: a user record under its phone and under its id, created together. */
export const redisUserStore = (connection: Connection): UserStore["Service"] => {
  const phoneKey = (phone: string) => `${connection.keyPrefix}{users}:phone:${phone}`
  const idKey = (id: UserId) => `${connection.keyPrefix}{users}:id:${id}`
  return UserStore.of({
    findOrCreate: (candidate) =>
      connection.run(
        "UserStore.findOrCreate",
        findOrCreate,
        [phoneKey(candidate.phone), idKey(candidate.id)],
        [encodeUser(candidate)],
        UserJson
      ),
    findById: (id) =>
      connection
        .send("UserStore.findById", (client) => client.get(idKey(id)), Schema.NullOr(UserJson))
        .pipe(Effect.map((user) => user ?? undefined))
  })
}
