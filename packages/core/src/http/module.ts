import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type { ProblemSlice, Tagged } from "../internal/problem"
import type { CommonError } from "./problemTable"
import type { Route } from "./route"

/** What a module says of its health: whether it can serve, and details for the operator. */
export interface ModuleHealth {
  readonly healthy: boolean
  readonly detail: Readonly<Record<string, unknown>>
}

/**
 * A feature the gateway is composed from (phone sign-in, app auth, wallet transactions, payouts, lookups):
 * its routes, its slice of the problem table, and the layer that builds its services from the ports it
 * needs. `Ports` are what the gateway's ports must provide; `Provides` the services it offers to the
 * modules that name it in `needs`.
 */
export interface GatewayModule<out Ports, in Provides = never> {
  /** The module's name, as other modules' `needs` refer to it. */
  readonly name: string
  /** Modules whose services this one uses; the gateway builds them first. */
  readonly needs: ReadonlyArray<string>
  readonly routes: ReadonlyArray<Route<unknown>>
  /** How the errors its routes raise are answered (beyond the transport's, idempotency's and state's). */
  readonly problems: ProblemSlice<Tagged>
  readonly layer: Layer.Layer<Provides, never, Ports>
  /** What `GET /v1/health` reports of this module, if anything. */
  readonly health?: Effect.Effect<ModuleHealth, never, unknown>
  /** What `GET /v1/health` adds for the operator alone (`Authorization: Bearer <operator token>`). */
  readonly operatorHealth?: Effect.Effect<Readonly<Record<string, unknown>>, never, unknown>
}

/**
 * Declares a module: its routes may use its services and its ports, and its problem slice must map every
 * error its routes raise beyond the common ones, so no error of a module reaches a client as a 500.
 */
export const defineModule = <Provides, Ports, E extends Tagged = never>(module: {
  readonly name: string
  readonly needs?: ReadonlyArray<string>
  readonly layer: Layer.Layer<Provides, never, Ports>
  readonly routes: ReadonlyArray<Route<Provides | Ports, E | CommonError>>
  readonly problems: ProblemSlice<Exclude<E, CommonError>>
  readonly health?: Effect.Effect<ModuleHealth, never, Provides | Ports>
  readonly operatorHealth?: Effect.Effect<Readonly<Record<string, unknown>>, never, Provides | Ports>
}): GatewayModule<Ports, Provides> => ({
  name: module.name,
  needs: module.needs ?? [],
  layer: module.layer,
  // Checked above against the module's services and ports; the gateway provides both.
  routes: module.routes as ReadonlyArray<Route<unknown>>,
  problems: module.problems as ProblemSlice<Tagged>,
  ...(module.health === undefined ? {} : { health: module.health as Effect.Effect<ModuleHealth, never, unknown> }),
  ...(module.operatorHealth === undefined
    ? {}
    : {
        operatorHealth: module.operatorHealth as Effect.Effect<Readonly<Record<string, unknown>>, never, unknown>
      })
})

/** The ports a set of modules needs from the gateway: theirs, less what the modules provide each other. */
export type PortsOf<M extends ReadonlyArray<GatewayModule<unknown, never>>> = Exclude<
  PortsOfModule<M[number]>,
  ServicesOf<M>
>

/** The services a set of modules provides. */
type ServicesOf<M extends ReadonlyArray<GatewayModule<unknown, never>>> = ServicesOfModule<M[number]>

// Distributed over the union of modules, one module at a time.
type PortsOfModule<T> = T extends GatewayModule<infer P, infer _S> ? P : never
type ServicesOfModule<T> = T extends GatewayModule<infer _P, infer S> ? S : never
