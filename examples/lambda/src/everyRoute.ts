// The gateway of every route (phone sign-in, app tokens, wallet transactions, payouts, the /api lookups, health), its
// state on Redis, from the settings the function read at init (./settings).
import { embeddedPorts, makeGateway } from "@walletgate/core"
import { otlpTelemetry } from "@walletgate/core/telemetry"
import { RedisStores } from "@walletgate/redis"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { productionSettings } from "./settings"

export { productionSettings }

/** Every setting of the function of every route (`productionSettings()`). */
export type ProductionSettings = Effect.Success<ReturnType<typeof productionSettings>>

/** The gateway of every route on Redis. */
export const everyRouteGateway = (settings: ProductionSettings) =>
  makeGateway({
    kernel: { clientStatuses: settings.clientStatuses, resolver: { access: settings.resolverAccess } },
    ...Option.match(settings.operatorToken, {
      onNone: () => ({}),
      onSome: (token) => ({ operatorToken: Redacted.value(token) })
    }),
    // With an operator token (WALLETGATE_OPERATOR_TOKEN or _TOKENS), the operator API is served under /v1/operator/.
    operatorTokens: Redacted.value(settings.operatorTokens),
    // OTEL_* set: spans, metrics and logs are flushed before each answer (1 s at most unless
    // WALLETGATE_TELEMETRY_FLUSH_MS says otherwise), never on a timer: a frozen container has nothing left to send.
    ...(settings.telemetry === undefined
      ? {}
      : {
          telemetry: otlpTelemetry({
            ...settings.telemetry,
            flushBeforeAnswerMs: settings.telemetry.flushBeforeAnswerMs ?? 1000
          })
        }),
    ports: Layer.mergeAll(
      embeddedPorts({
        issuer: settings.issuer,
        masterSecret: settings.masterSecret,
        networks: settings.networks,
        identityProviders: settings.identityProviders
      }),
      settings.smsSender,
      settings.signingKeys,
      // Every state port on Redis (a later layer wins): codes, users, rate limits, apps, API keys, automation accounts,
      // idempotency keys, account locks, the transaction log and the gas ledger, shared by every container.
      RedisStores.layer(settings.redis)
    )
  })
