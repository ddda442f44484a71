// walletgate in production as one AWS Lambda function: every route (phone sign-in, app tokens, wallet transactions,
// payouts, the /api lookups, health), its state on Redis, its networks and bundlers from the networks file, its secrets
// from the environment. This module runs once per container, at cold start: the settings are read and the gateway's
// layers built here (a bad setting fails the init, not a user's request), so warm invocations pay nothing for setup.
// Nothing runs after an answer: every request's work (a user operation sent to the bundler, an SMS) is done before
// the handler returns, and a container frozen between invocations has nothing left to do.
import { embeddedPorts, makeGateway } from "@walletgate/core"
import { otlpTelemetry } from "@walletgate/core/telemetry"
import { createHandler } from "@walletgate/lambda"
import { RedisStores } from "@walletgate/redis"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { productionSettings } from "./settings"

const settings = await Effect.runPromise(productionSettings())

const gateway = makeGateway({
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

// Build the layers during the init phase: a bad configuration fails the cold start, not a user's request. Redis is
// waited for up to a second; if it does not answer, the init still completes and every request that needs state
// answers 503 store_unavailable until it does (the README's "Redis unreachable").
await gateway.ready()

/**
 * The function's handler: `handler.handler` in template.yaml. It trusts its proxy: behind an ALB the client
 * address is then the X-Forwarded-For entry the load balancer appended, so each client has its own per-IP
 * sign-in budget (see the README). API Gateway events carry the source address whatever this says.
 */
export const handler = createHandler(gateway, { trustProxy: true })
