import { GasLedger } from "@walletgate/core/state"
import * as Layer from "effect/Layer"
import { redisGasLedger } from "../internal/GasLedger"
import { RedisConnection } from "../RedisConnection"

/** `GasLedger` on the shared {@link RedisConnection}: the gas reservations of the spend policy. */
export const RedisGasLedger: Layer.Layer<GasLedger, never, RedisConnection> = Layer.effect(
  GasLedger,
  RedisConnection.useSync(({ connection }) => redisGasLedger(connection))
)
