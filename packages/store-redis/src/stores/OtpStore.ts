import { OtpStore } from "@walletgate/core/otp"
import * as Layer from "effect/Layer"
import { redisOtpStore } from "../internal/OtpStore"
import { RedisConnection } from "../RedisConnection"

/** `OtpStore` on the shared {@link RedisConnection}: the one-time codes (phone sign-in). */
export const RedisOtpStore: Layer.Layer<OtpStore, never, RedisConnection> = Layer.effect(
  OtpStore,
  RedisConnection.useSync(({ connection }) => redisOtpStore(connection))
)
