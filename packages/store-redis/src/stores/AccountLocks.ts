import { AccountLocks } from "@walletgate/core/state"
import * as Layer from "effect/Layer"
import { redisAccountLocks } from "../internal/AccountLocks"
import { RedisConnection } from "../RedisConnection"

/** `AccountLocks` on the shared {@link RedisConnection}: the account locks (waited for at most the connection's `lockWaitMs`). */
export const RedisAccountLocks: Layer.Layer<AccountLocks, never, RedisConnection> = Layer.effect(
  AccountLocks,
  RedisConnection.useSync(({ connection, lockWaitMs }) => redisAccountLocks(connection, lockWaitMs))
)
