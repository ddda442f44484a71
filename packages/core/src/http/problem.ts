import type { FieldProblem, ProblemMapping, Tagged } from "../internal/problem"

/** The media type of every error answer (RFC 9457). */
export const PROBLEM_JSON = "application/problem+json"

/** An RFC 9457 problem document, as walletgate writes it. */
export interface ProblemDocument {
  readonly type: string
  readonly title: string
  readonly status: number
  readonly detail: string
  /** Stable, machine-readable; the same code always means the same thing. */
  readonly code: string
  readonly errors?: ReadonlyArray<FieldProblem>
  /** Extension members of some problems (RFC 9457 §3.2). */
  readonly [extension: string]: unknown
}

/** The `type` URI of a problem code. */
const problemType = (code: string): string => `urn:walletgate:problem:${code}`

/** The answer to `error` by `mapping`: its problem document and the headers it adds. */
export const problemOf = <E extends Tagged>(
  mapping: ProblemMapping<E>,
  error: E
): { readonly document: ProblemDocument; readonly headers: Readonly<Record<string, string>> } => {
  const errors = mapping.errors?.(error)
  return {
    document: {
      ...mapping.extensions?.(error),
      type: problemType(mapping.code),
      title: mapping.title,
      status: mapping.status,
      detail: mapping.detail(error),
      code: mapping.code,
      ...(errors === undefined ? {} : { errors })
    },
    headers: mapping.headers?.(error) ?? {}
  }
}

/** The answer to a defect: status 500, and nothing about what went wrong. */
export const internalErrorDocument: ProblemDocument = {
  type: problemType("internal_error"),
  title: "Internal error",
  status: 500,
  detail: "Something went wrong on our side. Quote the x-request-id when you report it.",
  code: "internal_error"
}
