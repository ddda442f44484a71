import { IdempotencyStore } from "@walletgate/core/state"
import * as Layer from "effect/Layer"
import { redisIdempotencyStore } from "../internal/IdempotencyStore"
import { RedisConnection } from "../RedisConnection"

/** `IdempotencyStore` on the shared {@link RedisConnection}: the idempotency records of the money routes. */
export const RedisIdempotencyStore: Layer.Layer<IdempotencyStore, never, RedisConnection> = Layer.effect(
  IdempotencyStore,
  RedisConnection.useSync(({ connection }) => redisIdempotencyStore(connection))
)
