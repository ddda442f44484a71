import { ApiKeyStore } from "@walletgate/core/payout"
import * as Layer from "effect/Layer"
import { redisApiKeyStore } from "../internal/ApiKeyStore"
import { RedisConnection } from "../RedisConnection"

/** `ApiKeyStore` on the shared {@link RedisConnection}: the API keys of the automation accounts. */
export const RedisApiKeyStore: Layer.Layer<ApiKeyStore, never, RedisConnection> = Layer.effect(
  ApiKeyStore,
  RedisConnection.useSync(({ connection }) => redisApiKeyStore(connection))
)
