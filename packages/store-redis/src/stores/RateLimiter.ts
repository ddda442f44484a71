import { RateLimiter } from "@walletgate/core/state"
import * as Layer from "effect/Layer"
import { redisRateLimiter } from "../internal/RateLimiter"
import { RedisConnection } from "../RedisConnection"

/** `RateLimiter` on the shared {@link RedisConnection}: the rate limits, shared by every instance (phone sign-in and the wallet routes). */
export const RedisRateLimiter: Layer.Layer<RateLimiter, never, RedisConnection> = Layer.effect(
  RateLimiter,
  RedisConnection.useSync(({ connection }) => redisRateLimiter(connection))
)
