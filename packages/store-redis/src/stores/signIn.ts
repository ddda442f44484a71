import type { OtpStore, UserStore } from "@walletgate/core/otp"
import type { RateLimiter } from "@walletgate/core/state"
import * as Layer from "effect/Layer"
import type { RedisConnection } from "../RedisConnection"
import { RedisOtpStore } from "./OtpStore"
import { RedisRateLimiter } from "./RateLimiter"
import { RedisUserStore } from "./UserStore"

/**
 * The state phone sign-in keeps (`phoneSignIn()`: codes, users, rate limits) on the shared {@link RedisConnection},
 * and nothing else: a function that serves sign-in alone bundles no other store, and no chain code.
 */
export const RedisSignInStores: Layer.Layer<OtpStore | UserStore | RateLimiter, never, RedisConnection> =
  Layer.mergeAll(RedisOtpStore, RedisUserStore, RedisRateLimiter)
