import { ClientStore } from "@walletgate/core/auth"
import * as Layer from "effect/Layer"
import { redisClientStore } from "../internal/ClientStore"
import { RedisConnection } from "../RedisConnection"

/** `ClientStore` on the shared {@link RedisConnection}: the registered apps. */
export const RedisClientStore: Layer.Layer<ClientStore, never, RedisConnection> = Layer.effect(
  ClientStore,
  RedisConnection.useSync(({ connection }) => redisClientStore(connection))
)
