import { isDeepStrictEqual } from "node:util"
import * as Effect from "effect/Effect"

/**
 * One case of a port contract: an Effect that needs the port, run on a fresh instance of it, and that
 * dies with an `Error` naming the broken expectation when the implementation does not keep the contract.
 */
export interface PortContractCase<R> {
  readonly name: string
  readonly run: Effect.Effect<void, unknown, R>
}

/** Dies unless `actual` deep-equals `expected`. */
export const expectEqual = <A>(what: string, actual: A, expected: A): Effect.Effect<void> =>
  isDeepStrictEqual(actual, expected)
    ? Effect.void
    : Effect.die(new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`))

/** Counts the elements of `values` equal to `value`. */
export const countOf = <A>(values: ReadonlyArray<A>, value: A): number =>
  values.filter((candidate) => isDeepStrictEqual(candidate, value)).length

/** `count` copies of `effect`, run all at once. */
export const concurrently = <A, E, R>(count: number, effect: (index: number) => Effect.Effect<A, E, R>) =>
  Effect.all(
    Array.from({ length: count }, (_, index) => effect(index)),
    { concurrency: "unbounded" }
  )

/** A fixed instant (a whole hour, epoch ms), so that the cases pass `now` explicitly and never read a clock. */
export const T0 = 472_222 * 3_600_000
