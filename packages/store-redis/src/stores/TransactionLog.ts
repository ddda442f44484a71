import { TransactionLog } from "@walletgate/core/state"
import * as Layer from "effect/Layer"
import { redisTransactionLog } from "../internal/TransactionLog"
import { RedisConnection } from "../RedisConnection"

/** `TransactionLog` on the shared {@link RedisConnection}: the wallet transactions' log. */
export const RedisTransactionLog: Layer.Layer<TransactionLog, never, RedisConnection> = Layer.effect(
  TransactionLog,
  RedisConnection.useSync(({ connection }) => redisTransactionLog(connection))
)
