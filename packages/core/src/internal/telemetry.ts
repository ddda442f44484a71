// What the gateway's domains record for operators: the metrics under their OpenTelemetry names, and the client spans of
// calls made outside an Effect (viem's transport). Exporting them is `telemetry/`'s; this module is at the bottom so
// that `state/`, `chain/` and the domains can all count.
import { AsyncLocalStorage } from "node:async_hooks"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as Tracer from "effect/Tracer"

/**
 * The exporting side of a gateway's telemetry, provided by `otlpTelemetry` (`@walletgate/core/telemetry`). Without
 * it a gateway records no span (its tracer is off) and exports nothing; its metrics stay readable as Prometheus text.
 */
export class Telemetry extends Context.Service<
  Telemetry,
  {
    /** Sends what is buffered now; never fails. */
    readonly flush: Effect.Effect<void>
    /** When set, every answer waits for a flush of at most this many ms before it is handed back (Lambda). */
    readonly flushBeforeAnswerMs: number | undefined
  }
>()("walletgate/Telemetry") {}

/** Where one signal (traces, metrics or logs) is sent: its full URL and the headers of each export. */
export interface OtlpTarget {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
}

/** How a gateway exports its telemetry; a signal without a target is not exported. */
export interface TelemetrySettings {
  /** `service.name` of the resource. */
  readonly serviceName: string
  /** Further resource attributes (`OTEL_RESOURCE_ATTRIBUTES`). */
  readonly resourceAttributes?: Readonly<Record<string, string>>
  /** `http/protobuf` (OpenTelemetry's default) or `http/json`. */
  readonly protocol: "http/json" | "http/protobuf"
  readonly traces?: OtlpTarget
  readonly metrics?: OtlpTarget
  readonly logs?: OtlpTarget
  /** How often buffered telemetry is sent, in ms; default 5000 (metrics: 10000). */
  readonly exportIntervalMs?: number
  /**
   * Flush before every answer, waiting at most this many ms, and never export on a timer: for Lambda, where nothing
   * may run after the answer. Unset: export every `exportIntervalMs`.
   */
  readonly flushBeforeAnswerMs?: number
}

// --- Metrics ------------------------------------------------------------------------------------------------------

/** OpenTelemetry's default bucket boundaries for durations in seconds (semantic conventions, HTTP metrics). */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]

/** How long the gateway took to answer, in seconds, by `http.route`, `http.request.method` and status. */
export const requestDuration = Metric.histogram("http.server.request.duration", {
  description: "Duration of HTTP server requests.",
  boundaries: DURATION_BUCKETS,
  attributes: { unit: "s" }
})

/** SMS codes handed to the sender, by `outcome` (`sent`, `failed`) and `provider`. */
export const smsSent = Metric.counter("walletgate.sms.sent", {
  description: "Sign-in codes handed to the SMS provider.",
  incremental: true
})

/** Codes verified (a user token issued). */
export const signInVerified = Metric.counter("walletgate.sign_in.verified", {
  description: "Sign-in codes verified.",
  incremental: true
})

/** Codes refused (wrong, expired, used or voided). */
export const signInFailed = Metric.counter("walletgate.sign_in.failed", {
  description: "Sign-in codes refused.",
  incremental: true
})

/** User operations by `kind` (`kernel`, `payout`) and `status` (`submitted`, `confirmed`, `reverted`, `dropped`). */
export const userOperations = Metric.counter("walletgate.user_operations", {
  description: "User operation transitions: each submission and each settlement counted once.",
  incremental: true
})

/** Gas the paymaster sponsored for included operations, by `walletgate.app` (the record's owner). */
export const gasSponsored = Metric.counter("walletgate.gas.sponsored", {
  description: "Gas used by sponsored user operations once included.",
  incremental: true,
  attributes: { unit: "{gas}" }
})

/** The paymaster's deposit at the EntryPoint, in wei, by `network`, as the health check last read it. */
export const paymasterDeposit = Metric.gauge("walletgate.paymaster.deposit", {
  description: "The paymaster's EntryPoint deposit, in wei, when last read.",
  bigint: true,
  attributes: { unit: "wei" }
})

/** Requests refused by a rate limit, by `limit`. */
export const rateLimited = Metric.counter("walletgate.rate_limited", {
  description: "Requests refused by a rate limit.",
  incremental: true
})

/** Bundler calls that failed, by `code` (its JSON-RPC error code, or `unavailable`). */
export const bundlerErrors = Metric.counter("walletgate.bundler.errors", {
  description: "Bundler calls that failed.",
  incremental: true
})

/** Adds `amount` (default 1) to `counter` under `attributes`. */
export const count = (
  counter: Metric.Counter<number>,
  attributes: Readonly<Record<string, string>>,
  amount = 1
): Effect.Effect<void> => Metric.update(Metric.withAttributes(counter, attributes), amount)

/** The names Prometheus shows: dots become underscores, counters end in `_total`, units are suffixed. */
export const prometheusNames: Readonly<Record<string, string>> = {
  "http.server.request.duration": "http_server_request_duration_seconds",
  "walletgate.sms.sent": "walletgate_sms_sent_total",
  "walletgate.sign_in.verified": "walletgate_sign_in_verified_total",
  "walletgate.sign_in.failed": "walletgate_sign_in_failed_total",
  "walletgate.user_operations": "walletgate_user_operations_total",
  "walletgate.gas.sponsored": "walletgate_gas_sponsored_total",
  "walletgate.paymaster.deposit": "walletgate_paymaster_deposit_wei",
  "walletgate.rate_limited": "walletgate_rate_limited_total",
  "walletgate.bundler.errors": "walletgate_bundler_errors_total"
}

// --- Spans outside an Effect ----------------------------------------------------------------------------------------

/** The fiber whose step is running, when a tracer made by {@link withActiveFiber} is installed. */
const activeFiber = new AsyncLocalStorage<Fiber.Fiber<unknown, unknown>>()

/**
 * `tracer`, remembering the running fiber in an `AsyncLocalStorage` for each step: a promise a step starts (a viem
 * request) finds its caller's span through {@link tracedPromise}. Only installed when spans are exported.
 */
export const withActiveFiber = (tracer: Tracer.Tracer): Tracer.Tracer =>
  Tracer.make({
    span: (options) => tracer.span(options),
    context: (primitive, fiber) => activeFiber.run(fiber, () => primitive["~effect/Effect/evaluate"](fiber))
  })

/**
 * Runs `call` in a client span named `name`, a child of the span of the fiber that started it; without an active
 * fiber (no exporting tracer) it is `call()` and nothing else. The span ends when the promise settles.
 */
export const tracedPromise = <A>(
  name: string,
  attributes: Readonly<Record<string, string>>,
  call: () => Promise<A>
): Promise<A> => {
  const fiber = activeFiber.getStore()
  if (fiber === undefined || !fiber.getRef(References.TracerEnabled)) return call()
  const parent = Context.getOrUndefined(fiber.context, Tracer.ParentSpan)
  if (parent === undefined) return call()
  const clock = fiber.getRef(Clock.Clock)
  const span = fiber.getRef(Tracer.Tracer).span({
    name,
    parent: Option.some(parent),
    annotations: Context.empty(),
    links: [],
    startTime: clock.currentTimeNanosUnsafe(),
    kind: "client",
    root: false,
    sampled: parent.sampled
  })
  for (const [key, value] of Object.entries(attributes)) span.attribute(key, value)
  return call().then(
    (value) => {
      span.end(clock.currentTimeNanosUnsafe(), Exit.void)
      return value
    },
    (error: unknown) => {
      // The error's name only: a node's message may quote the request.
      span.end(
        clock.currentTimeNanosUnsafe(),
        Exit.fail(error instanceof Error ? error.name : "error") as Exit.Exit<unknown, unknown>
      )
      return Promise.reject(error)
    }
  )
}
