import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as Result from "effect/Result"
import * as Tracer from "effect/Tracer"
import type { Tagged } from "../internal/problem"
import { requestDuration, Telemetry } from "../internal/telemetry"
import {
  declaresBodyOver,
  type FetchOptions,
  type Gateway,
  type GatewayRequest,
  type GatewayResponse,
  normalBasePath,
  pathBelow,
  problemResponse,
  type ResponseHeaders,
  readRequestBody,
  webHeaders
} from "./contract"
import { MethodNotAllowed, PayloadTooLarge, RouteNotFound } from "./errors"
import { internalErrorDocument } from "./problem"
import { type ProblemTable, problemFor } from "./problemTable"
import { parseBody } from "./requestBody"
import { requestIdOf } from "./requestId"
import { type Reply, type Route, type RouteContext, SerialisedJson, ServedText } from "./route"
import { makeRouter } from "./router"

/** The default largest body: 100 KiB. */
const DEFAULT_BODY_LIMIT = 100 * 1024

/** How to build a gateway from routes and the layer that provides what they need. */
export interface GatewayOptions<R, E> {
  readonly routes: ReadonlyArray<Route<R>>
  /** How every error the routes raise is answered; an error it does not map is answered 500 and logged. */
  readonly problems: ProblemTable
  readonly layer: Layer.Layer<R, E>
  /** Largest request body in bytes; default {@link DEFAULT_BODY_LIMIT}. */
  readonly bodyLimit?: number
  /** The path the gateway answers below (`"/wallet"`); default the root. */
  readonly basePath?: string
}

const JSON_CONTENT: ResponseHeaders = { "content-type": "application/json" }

/** A request's outcome, and the headers its route adds to every answer. */
interface Routed {
  readonly outcome: Exit.Exit<Reply, Tagged>
  readonly headers?: ResponseHeaders
}

/** The answer to a HEAD: the GET's status and headers, no body. */
const withoutBody = (response: GatewayResponse): GatewayResponse => ({ ...response, body: "" })

/** The methods of HTTP (RFC 9110 §9, RFC 5789): the only values of a metric's `http.request.method`. */
const HTTP_METHODS: ReadonlySet<string> = new Set("GET HEAD POST PUT PATCH DELETE OPTIONS TRACE CONNECT".split(" "))

/** Whether, and how, a gateway logs: decided once from the loggers and minimum level its layer provides. */
interface Logging {
  /** Some logger is installed: requests are annotated with their id. */
  readonly any: boolean
  /** The per-request line is at or above the minimum level. */
  readonly requests: boolean
}

/**
 * What a gateway records of each request, decided once from its services: the duration histogram always (it is read
 * as Prometheus text), a server span only when an exporting tracer is installed (the tracer is off otherwise).
 */
interface Recording {
  readonly tracer: Tracer.Tracer | undefined
  readonly clock: Clock.Clock
  readonly telemetry: Telemetry["Service"] | undefined
  /** The duration histogram of each route pattern, method and status, made once. */
  readonly durations: Map<string, Metric.Histogram<number>>
}

const recordingOf = (services: Context.Context<never>): Recording => ({
  tracer: Context.get(services, References.TracerEnabled) ? Context.get(services, Tracer.Tracer) : undefined,
  clock: Context.get(services, Clock.Clock),
  telemetry: Context.getOrUndefined(services, Telemetry),
  durations: new Map()
})

const loggingOf = (services: Context.Context<never>): Logging => {
  const any = Context.get(services, References.CurrentLoggers).size > 0
  return {
    any,
    requests: any && LogLevel.isGreaterThanOrEqualTo("Info", Context.get(services, References.MinimumLogLevel))
  }
}

/**
 * Builds a gateway: a router over `routes`, run on a runtime built once (lazily, on first use) from
 * `layer`. Every answer is JSON or problem+json and carries `x-request-id`, `x-content-type-options:
 * nosniff` and, unless the route says otherwise, `cache-control: no-store`.
 *
 * Every request takes one path (`answer`): routing and body parsing are plain code, a matched route's effect runs
 * in one fiber, and one function (`respond`) turns its outcome into the answer.
 */
export const makeGatewayFromRoutes = <R, E>(options: GatewayOptions<R, E>): Gateway => {
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT
  if (!Number.isInteger(bodyLimit) || bodyLimit < 1) throw new RangeError("bodyLimit must be a positive whole number")
  const basePath = normalBasePath(options.basePath)
  const runtime = ManagedRuntime.make(options.layer)
  const route = makeRouter(options.routes)
  // The outcomes of every unknown path and every body declared too large: the same values each time.
  const notFound: Routed = { outcome: Exit.fail(new RouteNotFound()) }
  const tooLarge: Routed = { outcome: Exit.fail(new PayloadTooLarge({ limit: bodyLimit })) }
  /** The answer to a defect (a bug): logged with its cause, answered 500 without a detail. */
  const defectAnswer = (cause: Cause.Cause<unknown>, requestId?: string): GatewayResponse => {
    const logged = Effect.logError("walletgate: unexpected failure", Cause.pretty(cause))
    runtime.runFork(requestId === undefined ? logged : Effect.annotateLogs(logged, { requestId }))
    return problemResponse(internalErrorDocument)
  }

  /**
   * The answer to a request's outcome. A reply is its JSON (serialised now, or once before: {@link SerialisedJson}),
   * its served text, or no body (and no content-type). An error is the problem the table maps it to, an outage logged
   * for the operator; a defect, or an error the table does not map, is logged and answered 500 without the route's
   * headers. Every answer carries `cache-control: no-store` unless its own headers say otherwise, then the route's
   * headers for every answer (`extra`), then `x-content-type-options` and `x-request-id`.
   */
  const respond = (
    outcome: Exit.Exit<Reply, Tagged>,
    requestId: string,
    logs: boolean,
    extra?: ResponseHeaders
  ): GatewayResponse => {
    let own: GatewayResponse
    let routeHeaders = extra
    if (Exit.isSuccess(outcome)) {
      const { status, body, headers } = outcome.value
      if (body === undefined) own = { status, headers: { ...headers }, body: "" }
      else if (body instanceof ServedText) {
        own = { status, headers: { "content-type": body.contentType, ...headers }, body: body.text }
      } else {
        const text = body instanceof SerialisedJson ? body.text : JSON.stringify(body)
        own = { status, headers: { ...JSON_CONTENT, ...headers }, body: text }
      }
    } else {
      // As `Effect.catch` decides: a cause with a defect is a defect, else its first failure is the answer.
      const found = Cause.hasDies(outcome.cause) ? undefined : Cause.findError(outcome.cause)
      const error = found === undefined || Result.isFailure(found) ? undefined : found.success
      const problem = error === undefined ? undefined : problemFor(options.problems, error)
      if (problem === undefined) {
        own = defectAnswer(outcome.cause, requestId)
        routeHeaders = undefined
      } else {
        // Outages are the operator's to see; error fields name what failed and never hold a secret.
        if (problem.document.status >= 500 && logs) {
          runtime.runFork(
            Effect.logWarning(`walletgate: ${problem.document.code}`, error).pipe(Effect.annotateLogs({ requestId }))
          )
        }
        own = problemResponse(problem.document, problem.headers)
      }
    }
    return {
      status: own.status,
      headers: {
        "cache-control": "no-store",
        ...own.headers,
        ...routeHeaders,
        "x-content-type-options": "nosniff",
        "x-request-id": requestId
      },
      body: own.body
    }
  }

  /** Runs effects on the built services. */
  interface Running {
    readonly services: Context.Context<R>
    readonly logging: Logging
    readonly recording: Recording
    readonly runPromiseExit: <A, X>(effect: Effect.Effect<A, X, R>) => Promise<Exit.Exit<A, X>>
  }
  let running: Running | undefined

  /**
   * Records the request's duration under its route's pattern (none for an unknown path), method and status. A method
   * outside HTTP's own is `_OTHER` (OpenTelemetry's convention): a client's made-up methods must not grow the series.
   */
  const recordDuration = (run: Running, pattern: string | undefined, method: string, status: number, ms: number) => {
    const known = HTTP_METHODS.has(method) ? method : "_OTHER"
    const key = `${pattern ?? ""} ${known} ${status}`
    let metric = run.recording.durations.get(key)
    if (metric === undefined) {
      metric = Metric.withAttributes(requestDuration, {
        ...(pattern === undefined ? {} : { "http.route": pattern }),
        "http.request.method": known,
        "http.response.status_code": String(status)
      })
      run.recording.durations.set(key, metric)
    }
    metric.updateUnsafe(ms / 1000, run.services as Context.Context<never>)
  }

  /** The server span of a request (OpenTelemetry's HTTP server conventions); never a header, query or body. */
  const serverSpan = (
    tracer: Tracer.Tracer,
    run: Running,
    request: GatewayRequest,
    pattern: string | undefined,
    requestId: string
  ) => {
    const method = request.method.toUpperCase()
    const span = tracer.span({
      name: pattern === undefined ? method : `${method} ${pattern}`,
      parent: Option.none(),
      annotations: Context.empty(),
      links: [],
      startTime: run.recording.clock.currentTimeNanosUnsafe(),
      kind: "server",
      root: false,
      sampled: true
    })
    span.attribute("http.request.method", method)
    if (pattern !== undefined) span.attribute("http.route", pattern)
    span.attribute("url.path", request.path)
    span.attribute("walletgate.request_id", requestId)
    return span
  }

  /**
   * The outcome of the route a request matched, and the route's headers for every answer: its body parsed, its effect
   * run in one fiber annotated with the request id and in the request's span.
   */
  const runRoute = async (
    found: Route<R>,
    context: RouteContext,
    run: Running,
    span: Tracer.Span | undefined
  ): Promise<Routed> => {
    const body = found.accepts.length === 0 ? undefined : parseBody(found.accepts, context.request, bodyLimit)
    const routed: Effect.Effect<Reply, Tagged, R> =
      body === undefined || Result.isSuccess(body) ? found.run(body?.success, context) : Effect.fail(body.failure)
    const { answerHeaders } = found
    const withHeaders = Effect.flatMap(Effect.exit(routed), (outcome) =>
      answerHeaders === undefined
        ? Effect.succeed({ outcome })
        : Effect.map(answerHeaders(context), (headers) => ({ outcome, headers }))
    )
    const annotated = run.logging.any ? Effect.annotateLogs(withHeaders, { requestId: context.requestId }) : withHeaders
    const exit = await run.runPromiseExit(span === undefined ? annotated : Effect.withParentSpan(annotated, span))
    return Exit.isSuccess(exit) ? exit.value : { outcome: Exit.failCause(exit.cause) }
  }

  const logRequest = (request: GatewayRequest, status: number, started: number, requestId: string) =>
    runtime.runFork(
      Effect.logInfo("walletgate: request").pipe(
        Effect.annotateLogs({
          method: request.method,
          path: request.path,
          status,
          ms: Math.round(performance.now() - started),
          requestId
        })
      )
    )

  /** The answer to a request below the mount, and its record: the log line, the duration, the span. */
  const answer = async (request: GatewayRequest, run: Running): Promise<GatewayResponse> => {
    const started = performance.now()
    const requestId = requestIdOf(request.headers["x-request-id"])
    const method = request.method.toUpperCase()
    // A declared body over the limit is refused whatever the route: a body of that size would never be read, and
    // waiting for it is what an attacker who declares 100 GB and sends 2 bytes wants. The answer closes the
    // connection (the problem's headers). HEAD is answered as the GET of the same path would be (RFC 9110 §9.3.2);
    // `handle` drops the body.
    const match = declaresBodyOver(request.headers["content-length"], bodyLimit)
      ? undefined
      : route(method === "HEAD" ? "GET" : method, request.path)
    const found = match?._tag === "Found" ? match : undefined
    const pattern = found?.route.path
    const tracer = run.recording.tracer
    const span =
      found === undefined || tracer === undefined ? undefined : serverSpan(tracer, run, request, pattern, requestId)
    const { outcome, headers } =
      match === undefined
        ? tooLarge
        : match._tag === "NotFound"
          ? notFound
          : match._tag === "WrongMethod"
            ? { outcome: Exit.fail(new MethodNotAllowed({ allow: match.allow })) }
            : await runRoute(
                match.route,
                { request, params: match.params, requestId, clientIp: request.remoteAddress },
                run,
                span
              )
    const response = respond(outcome, requestId, run.logging.any, headers)
    if (run.logging.requests) logRequest(request, response.status, started, requestId)
    recordDuration(run, pattern, method, response.status, performance.now() - started)
    if (span !== undefined) {
      span.attribute("http.response.status_code", response.status)
      span.end(
        run.recording.clock.currentTimeNanosUnsafe(),
        response.status >= 500 ? Exit.fail(`HTTP ${response.status}`) : Exit.void
      )
    }
    return response
  }

  /**
   * With `flushBeforeAnswerMs` (Lambda), the answer waits for the exporters' flush, at most that long: nothing is left
   * to send once it is handed back.
   */
  const flushBeforeAnswer = (answered: Promise<GatewayResponse>, run: Running): Promise<GatewayResponse> => {
    const telemetry = run.recording.telemetry
    if (telemetry?.flushBeforeAnswerMs === undefined) return answered
    const flush = Effect.timeoutOption(telemetry.flush, telemetry.flushBeforeAnswerMs)
    return answered.then((response) => runtime.runPromise(flush).then(() => response))
  }

  const handle = (request: GatewayRequest): Promise<GatewayResponse> => {
    const services = runtime.cachedContext
    // The layer is built on first use; a layer that fails to build answers 500 (and is tried again next time).
    if (services === undefined) {
      return runtime.context().then(
        () => handle(request),
        () => problemResponse(internalErrorDocument)
      )
    }
    if (running?.services !== services) {
      const runPromiseExit = Effect.runPromiseExitWith(services)
      running = {
        services,
        logging: loggingOf(services),
        recording: recordingOf(services),
        runPromiseExit: (effect) => runPromiseExit(effect)
      }
    }
    // A path outside the mount is not the gateway's: answered as any unknown path.
    const below = pathBelow(basePath, request.path)
    if (below === undefined) {
      return Promise.resolve(respond(notFound.outcome, requestIdOf(request.headers["x-request-id"]), false))
    }
    const mounted = below === request.path ? request : { ...request, path: below }
    // A bug outside the route's effect (its own failures are answered inside `answer`) is answered as a defect.
    const answered = answer(mounted, running).catch((defect: unknown) => defectAnswer(Cause.die(defect)))
    const flushed = flushBeforeAnswer(answered, running)
    return request.method.toUpperCase() === "HEAD" ? flushed.then(withoutBody) : flushed
  }

  const fetchHandler = async (request: Request, options: FetchOptions = {}): Promise<Response> => {
    const url = new URL(request.url)
    const headers: Record<string, string> = {}
    request.headers.forEach((value, name) => {
      headers[name] = value
    })
    const rawBody = await readRequestBody(request, bodyLimit)
    const response = await handle({
      method: request.method,
      path: url.pathname,
      query: url.searchParams,
      headers,
      ...(rawBody === undefined ? {} : { rawBody }),
      ...(options.remoteAddress === undefined || options.remoteAddress === ""
        ? {}
        : { remoteAddress: options.remoteAddress })
    })
    const empty = response.body === "" || response.status === 204 || response.status === 304
    return new Response(empty ? null : response.body, {
      status: response.status,
      headers: webHeaders(response.headers)
    })
  }

  return {
    handle,
    fetch: fetchHandler,
    basePath,
    bodyLimit,
    ready: () => runtime.runPromise(Effect.void),
    flush: () =>
      runtime.runPromise(
        Effect.flatMap(Effect.serviceOption(Telemetry), (telemetry) =>
          Option.isSome(telemetry) ? telemetry.value.flush : Effect.void
        )
      ),
    dispose: () => runtime.dispose()
  }
}
