import type { ProblemMapping, ProblemSlice, Tagged } from "../internal/problem"
import { type StateError, stateProblems } from "../state/errors"
import { type IdempotencyError, idempotencyProblems } from "../state/IdempotencyStore"
import { type TransportError, transportProblems } from "./errors"
import { type ProblemDocument, problemOf } from "./problem"

/** The errors every gateway answers, whatever it is built from: transport, idempotency and state. */
export type CommonError = TransportError | IdempotencyError | StateError

/** The problem table of a gateway: one mapping per error tag, from the slices of what it is built from. */
export type ProblemTable = ReadonlyMap<string, ProblemMapping<Tagged>>

/**
 * The table of the common slices and `slices`. A tag mapped twice must be mapped to the same code, or the
 * table is refused: one error always gets one answer.
 */
export const makeProblemTable = (slices: ReadonlyArray<ProblemSlice<Tagged>>): ProblemTable => {
  const table = new Map<string, ProblemMapping<Tagged>>()
  const common: ReadonlyArray<ProblemSlice<Tagged>> = [transportProblems, idempotencyProblems, stateProblems].map(
    (slice) => slice as ProblemSlice<Tagged>
  )
  for (const slice of [...common, ...slices]) {
    for (const [tag, mapping] of Object.entries(slice) as ReadonlyArray<[string, ProblemMapping<Tagged>]>) {
      const before = table.get(tag)
      if (before !== undefined && before.code !== mapping.code) {
        throw new TypeError(`walletgate: the error ${tag} is mapped to both ${before.code} and ${mapping.code}`)
      }
      table.set(tag, mapping)
    }
  }
  return table
}

/** The answer to an error of the table, or `undefined` for an error no slice maps (a bug, answered 500). */
export const problemFor = (
  table: ProblemTable,
  error: Tagged
): { readonly document: ProblemDocument; readonly headers: Readonly<Record<string, string>> } | undefined => {
  const mapping = table.get(error._tag)
  return mapping === undefined ? undefined : problemOf(mapping, error)
}
