import type { Route } from "./route"

/** The outcome of matching a method and path against the routes. */
export type RouteMatch<R> =
  | { readonly _tag: "Found"; readonly route: Route<R>; readonly params: Readonly<Record<string, string>> }
  | { readonly _tag: "WrongMethod"; readonly allow: ReadonlyArray<string> }
  | { readonly _tag: "NotFound" }

type Segment = { readonly param: string } | { readonly literal: string }

interface CompiledRoute<R> {
  readonly route: Route<R>
  readonly segments: ReadonlyArray<Segment>
}

const NOT_FOUND = { _tag: "NotFound" } as const
const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({})

/**
 * Matches exact paths with `:param` segments. A literal segment beats a parameter (`/api/orders`
 * is not `/api/:address`); params are percent-decoded, and an encoded slash stays inside its segment.
 * A path made only of literals is found with one map lookup; the others are tried among the routes
 * with as many segments as the path.
 */
export const makeRouter = <R>(routes: ReadonlyArray<Route<R>>) => {
  const compiled: Array<CompiledRoute<R>> = routes.map((route) => ({
    route,
    segments: route.path
      .split("/")
      .slice(1)
      .map((segment): Segment => (segment.startsWith(":") ? { param: segment.slice(1) } : { literal: segment }))
  }))
  // Routes with more literal segments first, so that literals win over parameters.
  const literalCount = (c: CompiledRoute<R>) => c.segments.filter((s) => "literal" in s).length
  compiled.sort((a, b) => literalCount(b) - literalCount(a))

  // Literal-only routes by path and method: no parameter route can beat them on their own path.
  const literal = new Map<string, Map<string, Route<R>>>()
  // Every route by its number of segments, in the order above.
  const bySegments = new Map<number, Array<CompiledRoute<R>>>()
  for (const entry of compiled) {
    if (entry.segments.every((segment) => "literal" in segment)) {
      const methods = literal.get(entry.route.path) ?? new Map<string, Route<R>>()
      if (!methods.has(entry.route.method)) methods.set(entry.route.method, entry.route)
      literal.set(entry.route.path, methods)
    }
    const sameLength = bySegments.get(entry.segments.length) ?? []
    sameLength.push(entry)
    bySegments.set(entry.segments.length, sameLength)
  }

  /** The params of `parts` (the path split at `/`, the empty part before the first `/` included), or `undefined`. */
  const matchPath = (entry: CompiledRoute<R>, parts: ReadonlyArray<string>): Record<string, string> | undefined => {
    const { segments } = entry
    // Literals first: they are cheap to compare and rule most routes out.
    for (let index = 0; index < segments.length; index++) {
      const segment = segments[index]
      if (segment !== undefined && "literal" in segment && segment.literal !== parts[index + 1]) return undefined
    }
    const params: Record<string, string> = {}
    for (let index = 0; index < segments.length; index++) {
      const segment = segments[index]
      if (segment === undefined || "literal" in segment) continue
      const part = parts[index + 1] ?? ""
      if (part === "") return undefined
      try {
        params[segment.param] = decodeURIComponent(part)
      } catch {
        return undefined
      }
    }
    return params
  }

  return (method: string, path: string): RouteMatch<R> => {
    const exact = literal.get(path)?.get(method)
    if (exact !== undefined) return { _tag: "Found", route: exact, params: NO_PARAMS }
    const parts = path.split("/")
    const candidates = bySegments.get(parts.length - 1)
    if (candidates === undefined) return NOT_FOUND
    const allow: Array<string> = []
    for (const entry of candidates) {
      const params = matchPath(entry, parts)
      if (params === undefined) continue
      if (entry.route.method === method) return { _tag: "Found", route: entry.route, params }
      if (!allow.includes(entry.route.method)) allow.push(entry.route.method)
      // Every GET route answers HEAD too (RFC 9110 §9.3.2).
      if (entry.route.method === "GET" && !allow.includes("HEAD")) allow.push("HEAD")
    }
    return allow.length > 0 ? { _tag: "WrongMethod", allow } : NOT_FOUND
  }
}
