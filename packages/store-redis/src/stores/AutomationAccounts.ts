import { AutomationAccounts } from "@walletgate/core/payout"
import * as Layer from "effect/Layer"
import { redisAutomationAccounts } from "../internal/AutomationAccounts"
import { RedisConnection } from "../RedisConnection"

/** `AutomationAccounts` on the shared {@link RedisConnection}: the automation accounts and their payout plans. */
export const RedisAutomationAccounts: Layer.Layer<AutomationAccounts, never, RedisConnection> = Layer.effect(
  AutomationAccounts,
  RedisConnection.useSync(({ connection }) => redisAutomationAccounts(connection))
)
