import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { SpendLimits } from "../chain/spendLimits"
import type { StoreUnavailable } from "../state/errors"
import { type GasBudget, type GasHold, GasLedger } from "../state/GasLedger"
import { GasBudgetExhausted, GasCeilingExceeded } from "./errors"

/** Who the gas of one operation is charged to. */
export type GasPayer =
  /**
   * A wallet batch an app sends for one of its users; `gasPerDay` is the app's own day budget (its `App.gasPerDay`),
   * counted per network in UTC days beside the network's hourly budgets.
   */
  | { readonly kind: "batch"; readonly app: string; readonly user: string; readonly gasPerDay?: number }
  /** A payout sent with an API key (by its id). */
  | { readonly kind: "payout"; readonly apiKey: string }

/** What the policy needs of a network: its chain id and limits (a `Network` is one). */
export interface SpendNetwork {
  readonly slug: string
  readonly chainId: number
  readonly spend: SpendLimits
}

/** The budgets' use on one network in the current window, for the operator's health report. */
export interface SpendUse {
  readonly network: string
  readonly limits: SpendLimits
  /** When the current window ends (ISO 8601). */
  readonly windowEndsAt: string
  /** Gas reserved on the network in the current window, by everyone. */
  readonly networkGasUsed: number
}

/**
 * The spend policy of the gas walletgate sponsors: before the gas of an operation is signed for, its
 * ceiling is checked and the gas is reserved in the payer's budgets and the network's, so that a refused
 * operation costs nothing and concurrent operations never reserve past a budget.
 */
export class SpendPolicy extends Context.Service<
  SpendPolicy,
  {
    /**
     * Checks `gas`, the most the operation can cost (the sum of the user operation's gas limits, which the
     * paymaster sponsors), against the network's ceiling for `payer`'s kind, then
     * reserves it in the payer's budgets (atomically, all or nothing) and in the network's. Call it after the
     * gas is known and before anything is signed or sent. The hold it returns is given back ({@link release}) only
     * for an operation that cost nothing (refused by the bundler, or dropped without being included).
     */
    readonly reserve: (
      network: SpendNetwork,
      payer: GasPayer,
      gas: bigint
    ) => Effect.Effect<GasHold, GasCeilingExceeded | GasBudgetExhausted | StoreUnavailable>
    /** Gives back what {@link reserve} held, in the window it was reserved in (an ended window is left as it was). */
    readonly release: (hold: GasHold) => Effect.Effect<void, StoreUnavailable>
    /**
     * Checks `gas` against the network's ceiling for `payer`'s kind without reserving anything: for a lower bound
     * known before the operation's gas is (a batch's simulated execution), so that an operation already over the
     * ceiling is refused before it is estimated.
     */
    readonly checkCeiling: (
      network: SpendNetwork,
      payer: GasPayer,
      gas: bigint
    ) => Effect.Effect<void, GasCeilingExceeded>
    /** The budgets' use on `network` in the current window. */
    readonly use: (network: SpendNetwork) => Effect.Effect<SpendUse, StoreUnavailable>
    /** The gas an app's batches reserved on `network` today (UTC), what its day budget counts. */
    readonly appGasToday: (network: SpendNetwork, app: string) => Effect.Effect<number, StoreUnavailable>
  }
>()("@walletgate/core/SpendPolicy") {
  /** The policy over the `GasLedger` port, with each network's limits. */
  static readonly layer: Layer.Layer<SpendPolicy, never, GasLedger> = Layer.effect(
    SpendPolicy,
    Effect.gen(function* () {
      const ledger = yield* GasLedger

      const refused = (budget: GasBudgetExhausted["budget"], retryAfterMs: number) =>
        new GasBudgetExhausted({ budget, retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)) })

      const checkCeiling = (network: SpendNetwork, payer: GasPayer, gas: bigint) => {
        const operation = payer.kind
        const ceiling = operation === "batch" ? network.spend.batchCeiling : network.spend.payoutCeiling
        return gas > BigInt(ceiling)
          ? Effect.fail(new GasCeilingExceeded({ operation, gas: String(gas), ceiling: String(ceiling) }))
          : Effect.void
      }

      const reserve = Effect.fnUntraced(function* (network: SpendNetwork, payer: GasPayer, gas: bigint) {
        const limits = network.spend
        yield* checkCeiling(network, payer, gas)
        // At most the ceiling, a safe integer: exact as a number.
        const amount = Number(gas)
        const windowMs = limits.windowSeconds * 1000
        const now = yield* Clock.currentTimeMillis
        // The payer's budgets first: a payer out of budget is refused without touching the network's, so that
        // one app's refused requests can never use up everyone's.
        const { scope, budgets } = payerBudgets(network, payer)
        const own = yield* ledger.reserve(scope, budgets, amount, windowMs, now)
        if (!own.reserved) return yield* refused(budgetKind(own.budget), own.retryAfterMs)
        const names = budgets.map((budget) => budget.name)
        const entries: Array<GasHold["entries"][number]> = [{ scope, names }]
        // Gives back what this reservation held so far: it is refused.
        const undo = Effect.forEach(
          entries,
          (entry) => ledger.release(entry.scope, entry.names, amount, entry.windowMs ?? windowMs, now, now),
          { discard: true }
        )
        if (payer.kind === "batch" && payer.gasPerDay !== undefined) {
          // Its own scope: a day window cannot share one atomic step with the hourly budgets' windows.
          const day = yield* ledger.reserve(
            appDayScope(network, payer.app),
            [{ name: APP_DAY, limit: payer.gasPerDay }],
            amount,
            DAY_MS,
            now
          )
          if (!day.reserved) {
            yield* undo
            return yield* refused("app_day", day.retryAfterMs)
          }
          entries.push({ scope: appDayScope(network, payer.app), names: [APP_DAY], windowMs: DAY_MS })
        }
        const shared = yield* ledger.reserve(
          networkScope(network),
          [{ name: "network", limit: limits.perNetwork }],
          amount,
          windowMs,
          now
        )
        if (!shared.reserved) {
          yield* undo
          return yield* refused("network", shared.retryAfterMs)
        }
        entries.push({ scope: networkScope(network), names: ["network"] })
        return { entries, gas: amount, windowMs, at: now } satisfies GasHold
      })

      const release = Effect.fnUntraced(function* (hold: GasHold) {
        const now = yield* Clock.currentTimeMillis
        for (const entry of hold.entries) {
          yield* ledger.release(entry.scope, entry.names, hold.gas, entry.windowMs ?? hold.windowMs, hold.at, now)
        }
      })

      const use = Effect.fnUntraced(function* (network: SpendNetwork) {
        const windowMs = network.spend.windowSeconds * 1000
        const now = yield* Clock.currentTimeMillis
        const networkGasUsed = yield* ledger.used(networkScope(network), "network", windowMs, now)
        return {
          network: network.slug,
          limits: network.spend,
          windowEndsAt: new Date(now - (now % windowMs) + windowMs).toISOString(),
          networkGasUsed
        }
      })

      const appGasToday = Effect.fnUntraced(function* (network: SpendNetwork, app: string) {
        return yield* ledger.used(appDayScope(network, app), APP_DAY, DAY_MS, yield* Clock.currentTimeMillis)
      })

      return SpendPolicy.of({ reserve, release, checkCeiling, use, appGasToday })
    })
  )
}

// Identifiers are percent-encoded so that no `{`, `}` or `:` of theirs can reach another scope or name.
const networkScope = (network: SpendNetwork) => `${network.chainId}`
const appDayScope = (network: SpendNetwork, app: string) => `${network.chainId}:appday:${encodeURIComponent(app)}`
const APP_DAY = "app_day"
/** A day budget's window: UTC days (windows are aligned to the epoch). */
const DAY_MS = 86_400_000

const payerBudgets = (
  network: SpendNetwork,
  payer: GasPayer
): { readonly scope: string; readonly budgets: readonly [GasBudget, ...Array<GasBudget>] } => {
  const limits = network.spend
  if (payer.kind === "payout") {
    return {
      scope: `${network.chainId}:key:${encodeURIComponent(payer.apiKey)}`,
      budgets: [{ name: "api_key", limit: limits.perApiKey }]
    }
  }
  // A user's budget is theirs at this app: another app can never use it up (it would be a way to lock a user
  // out of every app), and the app's budget bounds what all its users together spend.
  return {
    scope: `${network.chainId}:app:${encodeURIComponent(payer.app)}`,
    budgets: [
      { name: "app", limit: limits.perApp },
      { name: `user:${encodeURIComponent(payer.user)}`, limit: limits.perUser }
    ]
  }
}

/** The kind of a budget named by {@link payerBudgets}. */
const budgetKind = (name: string): GasBudgetExhausted["budget"] =>
  name === "api_key" ? "api_key" : name.startsWith("user:") ? "user" : "app"
