import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { StoreUnavailable } from "../state/errors"
import { makeFixedWindows } from "./fixedWindows"

/** How many ended windows the in-memory ledger forgets per call at most: more than one, to keep up with bursts. */

/** One budget an operation's gas counts against: at most `limit` gas per window under `name` in a scope. */
export interface GasBudget {
  readonly name: string
  /** Gas per window, a whole number from 1 to `Number.MAX_SAFE_INTEGER`. */
  readonly limit: number
}

/** The outcome of reserving gas in several budgets at once. */
export type GasReservation =
  | { readonly reserved: true }
  | {
      readonly reserved: false
      /** The first budget (in the order given) that has no room for the gas. */
      readonly budget: string
      /** Until its window ends. */
      readonly retryAfterMs: number
    }

/**
 * What one reservation put in the ledger, kept (in the transaction's record) so that it can be given back when the
 * operation turns out to cost nothing: refused by the bundler, or dropped without being included.
 */
export interface GasHold {
  /**
   * Each scope and the budgets of it the gas was counted in; `windowMs`, when present, is that entry's own window
   * (a day budget beside hourly ones), else the hold's.
   */
  readonly entries: ReadonlyArray<{
    readonly scope: string
    readonly names: ReadonlyArray<string>
    readonly windowMs?: number
  }>
  readonly gas: number
  readonly windowMs: number
  /** When it was reserved (ms): the window it counts in. */
  readonly at: number
}

/**
 * Gas counters in fixed windows, the state of the spend policy: how much gas each budget has reserved in the
 * current window. A reservation is all or nothing over the budgets of one call and decided atomically with
 * the counting, so concurrent callers (on one or many instances) never reserve past a limit.
 */
export class GasLedger extends Context.Service<
  GasLedger,
  {
    /**
     * Reserves `gas` at `now` (ms) in every one of `budgets` of `scope`, each in its window of `windowMs`, when
     * each has room for it (its reserved gas plus `gas` at most its limit); otherwise reserves nothing and names
     * the first budget without room. The budgets of one call share `scope`, which keeps them together (one Redis
     * Cluster slot), so that one atomic step decides them all.
     */
    readonly reserve: (
      scope: string,
      budgets: readonly [GasBudget, ...ReadonlyArray<GasBudget>],
      gas: number,
      windowMs: number,
      now: number
    ) => Effect.Effect<GasReservation, StoreUnavailable>
    /**
     * Gives back `gas` reserved at `at` under each of `names` of `scope`, if that window is still the current one at
     * `now` (an ended window is forgotten anyway); never below zero. For an operation that cost nothing.
     */
    readonly release: (
      scope: string,
      names: ReadonlyArray<string>,
      gas: number,
      windowMs: number,
      at: number,
      now: number
    ) => Effect.Effect<void, StoreUnavailable>
    /** The gas reserved under `name` of `scope` in the window of `now` (0 when none). */
    readonly used: (
      scope: string,
      name: string,
      windowMs: number,
      now: number
    ) => Effect.Effect<number, StoreUnavailable>
  }
>()("@walletgate/core/GasLedger") {
  /** Counters in this process's memory: right for one instance, wrong for a fleet (use `@walletgate/redis`). */
  static readonly memory: Layer.Layer<GasLedger> = Layer.sync(GasLedger, () => {
    const windows = makeFixedWindows()
    const keyOf = (scope: string, name: string) => `${scope}\u0000${name}`
    return GasLedger.of({
      reserve: (scope, budgets, gas, windowMs, now) =>
        Effect.sync((): GasReservation => {
          const start = now - (now % windowMs)
          for (const { name, limit } of budgets) {
            if ((windows.peek(keyOf(scope, name), windowMs, now)?.count ?? 0) + gas > limit) {
              return { reserved: false, budget: name, retryAfterMs: start + windowMs - now }
            }
          }
          for (const { name } of budgets) windows.open(keyOf(scope, name), windowMs, now).count += gas
          return { reserved: true }
        }),
      release: (scope, names, gas, windowMs, at, now) =>
        Effect.sync(() => {
          if (at - (at % windowMs) !== now - (now % windowMs)) return
          for (const name of names) {
            const window = windows.peek(keyOf(scope, name), windowMs, now)
            if (window !== undefined) window.count = Math.max(0, window.count - gas)
          }
        }),
      used: (scope, name, windowMs, now) =>
        Effect.sync(() => windows.peek(keyOf(scope, name), windowMs, now)?.count ?? 0)
    })
  })
}
