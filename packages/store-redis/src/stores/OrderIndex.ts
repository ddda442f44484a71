import { OrderIndex } from "@walletgate/core/sweeper"
import * as Layer from "effect/Layer"
import { redisOrderIndex } from "../internal/OrderIndex"
import { RedisConnection } from "../RedisConnection"

/** `OrderIndex` on the shared {@link RedisConnection}: the sweeper's order index. */
export const RedisOrderIndex: Layer.Layer<OrderIndex, never, RedisConnection> = Layer.effect(
  OrderIndex,
  RedisConnection.useSync(({ connection }) => redisOrderIndex(connection))
)
