import * as Schema from "effect/Schema"

/** One field-level problem found while decoding a request. */
export const FieldProblem = Schema.Struct({
  /** A JSON Pointer (RFC 6901) to the field, e.g. `/to/1`. */
  path: Schema.String,
  message: Schema.String
})
/** One field-level problem found while decoding a request. */
export type FieldProblem = typeof FieldProblem.Type

/** Anything with a `_tag`: the errors a problem table maps. */
export interface Tagged {
  readonly _tag: string
}

/** How one error is answered: status, stable code, title, and what else it may carry. */
export interface ProblemMapping<E> {
  readonly status: number
  readonly code: string
  readonly title: string
  /** A fixed sentence: it never echoes input, so no code, key or token can reach a response body. */
  readonly detail: (error: E) => string
  readonly headers?: (error: E) => Readonly<Record<string, string>>
  readonly errors?: (error: E) => ReadonlyArray<FieldProblem>
  /** RFC 9457 extension members (e.g. the failing call of a reverted batch). */
  readonly extensions?: (error: E) => Readonly<Record<string, string | number>>
}

/**
 * One room's part of the problem table: a mapping for each of its errors, by tag. Declared next to the
 * errors; the gateway's table is the union of the slices of the modules it is built from.
 */
export type ProblemSlice<E extends Tagged> = {
  readonly [Tag in E["_tag"]]: ProblemMapping<Extract<E, { readonly _tag: Tag }>>
}
