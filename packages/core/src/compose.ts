import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Metric from "effect/Metric"
import * as References from "effect/References"
import * as Schema from "effect/Schema"
import { type OperatorToken, operatorCheck, operatorTokensOf } from "./auth/operator"
import type { ConfigurationError } from "./config/read"
import type { Gateway } from "./http/contract"
import { RouteNotFound } from "./http/errors"
import { makeGatewayFromRoutes } from "./http/gateway"
import type { GatewayModule, PortsOf } from "./http/module"
import { type DocumentedRoute, openApiDocument } from "./http/openapi"
import { makeProblemTable } from "./http/problemTable"
import { documented, type Reply, type Route, routeWithoutBody, SerialisedJson, ServedText } from "./http/route"
import { PROMETHEUS_CONTENT_TYPE, prometheusText } from "./internal/prometheus"
import type { Telemetry } from "./internal/telemetry"

/** Options of {@link composeGateway}. */
export interface ComposeOptions<M extends ReadonlyArray<GatewayModule<unknown, never>>, E> {
  /** The features served, e.g. `[phoneSignIn(), appAuth()]`. */
  readonly modules: M
  /** The ports the modules need (state, SMS, keys, networks…), e.g. `embeddedPorts()` or production layers. */
  readonly ports: Layer.Layer<PortsOf<M>, E>
  /** Largest request body in bytes; default 100 KiB. */
  readonly bodyLimit?: number
  /**
   * The path the gateway answers below (`"/wallet"`), stripped by the gateway itself in `handle`, `fetch` and
   * every adapter; default the root. Under a host that already strips its mount (Express's `app.use("/wallet", …)`,
   * `koa-mount`), leave it unset: the gateway sees the path below that mount.
   */
  readonly basePath?: string
  /** Where log lines go; default Effect's console logger. Log lines never hold codes, tokens or keys. */
  readonly loggers?: ReadonlyArray<Logger.Logger<unknown, unknown>>
  /**
   * The operator token (at least 32 characters): `Authorization: Bearer <token>` on `GET /v1/health` adds what
   * the modules report to the operator alone (the spend policy's limits and use). Without it, nobody sees that.
   */
  readonly operatorToken?: string
  /**
   * Operator tokens with ids (several, so that one can be rotated), beside `operatorToken` (id `default`): each unlocks
   * the operator's detail of `GET /v1/health` as that token does.
   */
  readonly operatorTokens?: ReadonlyArray<OperatorToken>
  /**
   * Where spans, metrics and logs are exported: `otlpTelemetry(settings)` of `@walletgate/core/telemetry` (settings from
   * `telemetryFromEnv`). Without it no span is recorded and nothing is exported; the metrics are still kept, for
   * `GET /v1/operator/metrics`.
   */
  readonly telemetry?: Layer.Layer<Telemetry, ConfigurationError> | undefined
}

/**
 * Builds a gateway from the modules it serves and the ports they need: their routes, the problem table from
 * their slices, `GET /v1/health` over what they report, and `GET /openapi.json`, the OpenAPI 3.1 document of them all. A gateway of phone sign-in alone imports no chain
 * code; its type asks for exactly the ports its modules need.
 */
export const composeGateway = <const M extends ReadonlyArray<GatewayModule<unknown, never>>, E = never>(
  options: ComposeOptions<M, E>
): Gateway => {
  const modules = inBuildOrder(options.modules)
  // Each module is built on the ports and on every module before it, so it finds the services it needs.
  const services = modules.reduce<Layer.Layer<unknown, E>>(
    (built, module) => module.layer.pipe(Layer.provideMerge(built)),
    options.ports as Layer.Layer<unknown, E>
  )
  // Telemetry and the loggers reach the ports too, so what they record while they start goes where the rest goes. The
  // loggers are installed first: the OTLP logger joins them. Each gateway keeps its metrics in its own registry.
  const exported = services.pipe(
    Layer.provideMerge(options.telemetry ?? Layer.succeed(References.TracerEnabled, false))
  )
  const layer = (
    options.loggers === undefined ? exported : exported.pipe(Layer.provideMerge(Logger.layer(options.loggers)))
  ).pipe(Layer.provideMerge(Layer.sync(Metric.MetricRegistry, () => new Map())))
  const operatorOf = operatorCheck(operatorTokensOf(options))
  const served: ReadonlyArray<DocumentedRoute> = [
    ...modules.flatMap((module) => module.routes.map((route) => ({ route, problems: [module.problems] }))),
    { route: healthRoute(modules, operatorOf), problems: [] },
    { route: metricsRoute(operatorOf), problems: [] }
  ]
  return makeGatewayFromRoutes({
    routes: [...served.map(({ route }) => route), openApiRoute(served)],
    problems: makeProblemTable(modules.map((module) => module.problems)),
    layer,
    ...(options.bodyLimit === undefined ? {} : { bodyLimit: options.bodyLimit }),
    ...(options.basePath === undefined ? {} : { basePath: options.basePath })
  })
}

/** The modules ordered so that each comes after those it needs; a missing or circular need is refused. */
const inBuildOrder = (
  modules: ReadonlyArray<GatewayModule<unknown, never>>
): ReadonlyArray<GatewayModule<unknown, never>> => {
  const byName = new Map(modules.map((module) => [module.name, module]))
  if (byName.size !== modules.length) throw new TypeError("walletgate: a module is listed twice")
  const ordered: Array<GatewayModule<unknown, never>> = []
  const state = new Map<string, "visiting" | "done">()
  const visit = (module: GatewayModule<unknown, never>, path: ReadonlyArray<string>) => {
    if (state.get(module.name) === "done") return
    if (state.get(module.name) === "visiting") {
      throw new TypeError(`walletgate: modules need each other in a circle: ${[...path, module.name].join(" → ")}`)
    }
    state.set(module.name, "visiting")
    for (const name of module.needs) {
      const needed = byName.get(name)
      if (needed === undefined) {
        throw new TypeError(`walletgate: the module ${module.name} needs the module ${name}; add it to modules`)
      }
      visit(needed, [...path, module.name])
    }
    state.set(module.name, "done")
    ordered.push(module)
  }
  for (const module of modules) visit(module, [])
  return ordered
}

/** The answer of `GET /v1/health`: `ok` or `degraded`, and what each module reports beside it. */
const HealthReport = Schema.StructWithRest(Schema.Struct({ status: Schema.Literals(["ok", "degraded"]) }), [
  Schema.Record(Schema.String, Schema.Unknown)
])

const OPENAPI_PATH = "/openapi.json"

/**
 * `GET /openapi.json`: the OpenAPI 3.1 document of the gateway's routes, itself included, made once when first asked.
 */
const openApiRoute = (served: ReadonlyArray<DocumentedRoute>): Route<unknown> => {
  let body: SerialisedJson | undefined
  const route: Route<unknown> = documented(
    routeWithoutBody("GET", OPENAPI_PATH, (): Effect.Effect<Reply> => {
      body ??= new SerialisedJson(
        openApiDocument({ title: "walletgate", version: "1" }, [...served, { route, problems: [] }])
      )
      return Effect.succeed({ status: 200, body, headers: { "cache-control": "public, max-age=300" } })
    }),
    {
      summary: "This document: the gateway's routes, their schemas, problems and security (OpenAPI 3.1).",
      answers: [{ status: 200, description: "The OpenAPI document." }]
    }
  )
  return route
}

/**
 * `GET /v1/operator/metrics`: the gateway's metrics in Prometheus' text format, to the operator alone (a scrape config's
 * `authorization: { credentials: <token> }`); anyone else is answered 404, as an unknown path.
 */
const metricsRoute = (operatorOf: (authorization: string | undefined) => string | undefined): Route<unknown> =>
  documented(
    routeWithoutBody("GET", "/v1/operator/metrics", (context) =>
      operatorOf(context.request.headers.authorization) !== undefined
        ? Effect.map(prometheusText, (text) => ({
            status: 200,
            body: new ServedText(text, PROMETHEUS_CONTENT_TYPE)
          }))
        : Effect.fail(new RouteNotFound())
    ),
    {
      summary: "The gateway's metrics in Prometheus' text format (operator token).",
      answers: [{ status: 200, description: "Prometheus text (0.0.4)." }]
    }
  )

/**
 * `GET /v1/health`: 200 when every module that reports is healthy, else 503, with what each reports; the operator
 * also gets what the modules report to the operator alone. Anyone else gets exactly the public answer.
 */
const healthRoute = (
  modules: ReadonlyArray<GatewayModule<unknown, never>>,
  operatorOf: (authorization: string | undefined) => string | undefined
): Route<unknown> => {
  const checks = modules.flatMap((module) => (module.health === undefined ? [] : [module.health]))
  const operatorChecks = modules.flatMap((module) =>
    module.operatorHealth === undefined ? [] : [module.operatorHealth]
  )
  return documented(
    routeWithoutBody("GET", "/v1/health", (context) =>
      Effect.gen(function* () {
        const reports = yield* Effect.all(checks, { concurrency: "unbounded" })
        const healthy = reports.every((report) => report.healthy)
        const body = Object.assign({ status: healthy ? "ok" : "degraded" }, ...reports.map((report) => report.detail))
        if (operatorOf(context.request.headers.authorization) !== undefined) {
          Object.assign(body, ...(yield* Effect.all(operatorChecks, { concurrency: "unbounded" })))
        }
        return { status: healthy ? 200 : 503, body }
      })
    ),
    {
      summary: "Whether every module can serve, with what each reports (and, to the operator, budgets and limits).",
      answers: [
        { status: 200, description: "Healthy.", schema: HealthReport },
        { status: 503, description: "Degraded.", schema: HealthReport }
      ]
    }
  )
}
