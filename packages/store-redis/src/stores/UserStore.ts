import { UserStore } from "@walletgate/core/otp"
import * as Layer from "effect/Layer"
import { redisUserStore } from "../internal/UserStore"
import { RedisConnection } from "../RedisConnection"

/** `UserStore` on the shared {@link RedisConnection}: the users, one per phone number (phone sign-in). */
export const RedisUserStore: Layer.Layer<UserStore, never, RedisConnection> = Layer.effect(
  UserStore,
  RedisConnection.useSync(({ connection }) => redisUserStore(connection))
)
