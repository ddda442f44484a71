import type { Route } from "./route"

/** The outcome of matching a method and path against the routes. */
export type RouteMatch<R> =
  | { readonly _tag: "Found"; readonly route: Route<R>; readonly params: Readonly<Record<string, string>> }
  | { readonly _tag: "WrongMethod"; readonly allow: ReadonlyArray<string> }
  | { readonly _tag: "NotFound" }

interface CompiledRoute<R> {
  readonly route: Route<R>
  readonly segments: ReadonlyArray<{ readonly param: string } | { readonly literal: string }>
}

/**
 * Matches exact paths with `:param` segments. A literal segment beats a parameter (`/api/orders`
 * is not `/api/:address`); params are percent-decoded, and an encoded slash stays inside its segment.
 */
export const makeRouter = <R>(routes: ReadonlyArray<Route<R>>) => {
  const compiled: Array<CompiledRoute<R>> = routes.map((route) => ({
    route,
    segments: route.path
      .split("/")
      .slice(1)
      .map((segment) => (segment.startsWith(":") ? { param: segment.slice(1) } : { literal: segment }))
  }))
  // Routes with more literal segments first, so that literals win over parameters.
  const literalCount = (c: CompiledRoute<R>) => c.segments.filter((s) => "literal" in s).length
  compiled.sort((a, b) => literalCount(b) - literalCount(a))

  const matchPath = (entry: CompiledRoute<R>, parts: ReadonlyArray<string>): Record<string, string> | undefined => {
    if (entry.segments.length !== parts.length) return undefined
    const params: Record<string, string> = {}
    for (const [index, segment] of entry.segments.entries()) {
      const part = parts[index] ?? ""
      if ("literal" in segment) {
        if (segment.literal !== part) return undefined
      } else {
        if (part === "") return undefined
        try {
          params[segment.param] = decodeURIComponent(part)
        } catch {
          return undefined
        }
      }
    }
    return params
  }

  return (method: string, path: string): RouteMatch<R> => {
    const parts = path.split("/").slice(1)
    const allow: Array<string> = []
    let shape: { readonly route: Route<R>; readonly params: Record<string, string> } | undefined
    for (const entry of compiled) {
      const params = matchPath(entry, parts)
      if (params === undefined) continue
      if (entry.route.method === method) {
        shape ??= { route: entry.route, params }
      } else if (!allow.includes(entry.route.method)) {
        allow.push(entry.route.method)
      }
    }
    if (shape !== undefined) return { _tag: "Found", ...shape }
    return allow.length > 0 ? { _tag: "WrongMethod", allow } : { _tag: "NotFound" }
  }
}
