import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
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
import {
  BodyRequired,
  MalformedJson,
  MethodNotAllowed,
  PayloadTooLarge,
  RouteNotFound,
  UnsupportedMediaType
} from "./errors"
import { internalErrorDocument } from "./problem"
import { type ProblemTable, problemFor } from "./problemTable"
import { requestIdOf } from "./requestId"
import { type BodyMedia, type Reply, type Route, type RouteContext, SerialisedJson, ServedText } from "./route"
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

const utf8 = new TextDecoder("utf-8", { fatal: true })

/** The media type of a `content-type` value, lower-cased and without parameters. */
const mediaType = (contentType: string | undefined): string => {
  if (contentType === undefined) return ""
  const end = contentType.indexOf(";")
  return (end === -1 ? contentType : contentType.slice(0, end)).trim().toLowerCase()
}

/** What a route without a body is handed. */
const NO_BODY: Result.Result<unknown, Tagged> = Result.succeed(undefined)

/**
 * The body a route decodes, parsed by `content-type`; a failure is the error it is answered with. Plain code,
 * run before the route's effect: every request with a body goes through it.
 */
const parseBody = (
  accepts: ReadonlyArray<BodyMedia>,
  request: GatewayRequest,
  limit: number
): Result.Result<unknown, Tagged> => {
  // A declared length over the limit was refused before routing; bytes past it are refused here.
  const declared = Number(request.headers["content-length"] ?? "0")
  if ((request.rawBody?.byteLength ?? 0) > limit) return Result.fail(new PayloadTooLarge({ limit }))
  // A host parser may hand over `{}` for a request that had no body at all (RFC 9112 §6.3: a body is
  // framed by Content-Length or Transfer-Encoding), so a parsed body counts only when one was framed.
  const framed = request.headers["transfer-encoding"] !== undefined || declared > 0
  const hasBody = request.rawBody === undefined ? request.body !== undefined && framed : request.rawBody.byteLength > 0
  if (!hasBody) return Result.fail(new BodyRequired())
  const media = mediaType(request.headers["content-type"])
  const accepted = accepts.find((candidate) => candidate === media)
  if (accepted === undefined) return Result.fail(new UnsupportedMediaType({ accepted: accepts }))
  if (request.body !== undefined) return Result.succeed(request.body)
  let text: string
  try {
    text = utf8.decode(request.rawBody)
  } catch {
    return Result.fail(new MalformedJson())
  }
  if (accepted === "application/x-www-form-urlencoded") {
    return Result.succeed(Object.fromEntries(new URLSearchParams(text)))
  }
  try {
    return Result.succeed(JSON.parse(text))
  } catch {
    return Result.fail(new MalformedJson())
  }
}

/** Response headers: lower-case names. */
type HeaderMap = ResponseHeaders

/**
 * An answer with the headers every answer carries: `cache-control: no-store` unless the answer's own headers
 * (`base`, then `own`) say otherwise, then `extra` (a route's headers for every answer), and
 * `x-content-type-options` and `x-request-id` last. Built in one object: this runs for every request.
 */
const finished = (
  status: number,
  body: string,
  requestId: string,
  base: HeaderMap | undefined,
  own?: HeaderMap,
  extra?: HeaderMap
): GatewayResponse => ({
  status,
  headers: {
    "cache-control": "no-store",
    ...base,
    ...own,
    ...extra,
    "x-content-type-options": "nosniff",
    "x-request-id": requestId
  },
  body
})

const JSON_CONTENT: HeaderMap = { "content-type": "application/json" }

/** The JSON text of a reply's body: serialised now, or once before ({@link SerialisedJson}). */
const jsonText = (body: unknown): string => (body instanceof SerialisedJson ? body.text : JSON.stringify(body))

/** A route's reply as the answer: JSON or a served text, or no body (and no content-type) when the reply has none. */
const replyAnswer = (reply: Reply, requestId: string, extra: HeaderMap | undefined): GatewayResponse => {
  if (reply.body === undefined) return finished(reply.status, "", requestId, undefined, reply.headers, extra)
  if (reply.body instanceof ServedText) {
    const { text, contentType } = reply.body
    return finished(reply.status, text, requestId, { "content-type": contentType }, reply.headers, extra)
  }
  return finished(reply.status, jsonText(reply.body), requestId, JSON_CONTENT, reply.headers, extra)
}

/** The answer to a HEAD: the GET's status and headers, no body. */
const withoutBody = (response: GatewayResponse): GatewayResponse => ({ ...response, body: "" })

/** Whether an outcome is known without running it: `Effect.succeed` and `Effect.fail` are already exits. */
const isKnown = <R>(outcome: Effect.Effect<Reply, Tagged, R>): outcome is Exit.Exit<Reply, Tagged> =>
  Exit.isExit(outcome)

/** The methods of HTTP (RFC 9110 §9, RFC 5789): the only values of a metric's `http.request.method`. */
const HTTP_METHODS: ReadonlySet<string> = new Set([
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "PATCH",
  "DELETE",
  "OPTIONS",
  "TRACE",
  "CONNECT"
])

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
 * The path every request takes is kept short on purpose (the benchmarks compare it with bare frameworks):
 * routing and body parsing are plain code, an unknown path is answered without running an effect, and a
 * route's effect is the only one a request runs when nothing logs.
 */
export const makeGatewayFromRoutes = <R, E>(options: GatewayOptions<R, E>): Gateway => {
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT
  if (!Number.isInteger(bodyLimit) || bodyLimit < 1) throw new RangeError("bodyLimit must be a positive whole number")
  const basePath = normalBasePath(options.basePath)
  const runtime = ManagedRuntime.make(options.layer)
  const route = makeRouter(options.routes)
  /** The answer to an error of the table; the transport's own errors are always in it. */
  const problemAnswer = (error: Tagged): GatewayResponse => {
    const problem = problemFor(options.problems, error)
    return problem === undefined
      ? problemResponse(internalErrorDocument)
      : problemResponse(problem.document, problem.headers)
  }
  // The same documents for every unknown path and every body declared too large, so they are written once.
  const notFound = problemAnswer(new RouteNotFound())
  const tooLarge = problemAnswer(new PayloadTooLarge({ limit: bodyLimit }))

  /** The answer to a defect (a bug): logged with its cause, answered 500 without a detail. */
  const defectAnswer = (cause: Cause.Cause<unknown>, requestId?: string): GatewayResponse => {
    const logged = Effect.logError("walletgate: unexpected failure", Cause.pretty(cause))
    runtime.runFork(requestId === undefined ? logged : Effect.annotateLogs(logged, { requestId }))
    return problemResponse(internalErrorDocument)
  }

  /** A response of the gateway's own (a problem, a 500) as the answer. */
  const finish = (response: GatewayResponse, requestId: string, extra?: HeaderMap): GatewayResponse =>
    finished(response.status, response.body, requestId, response.headers, undefined, extra)

  /**
   * The answer to a route's outcome, plain code: its reply, or the problem its error maps to, with the route's
   * own headers on top.
   */
  const outcomeAnswer = (
    outcome: Exit.Exit<Reply, Tagged>,
    extra: HeaderMap | undefined,
    run: Running,
    requestId: string
  ): GatewayResponse => {
    if (Exit.isSuccess(outcome)) return replyAnswer(outcome.value, requestId, extra)
    // As `Effect.catch` decides: a cause with a defect is a defect, else its first failure is the answer.
    const error = Cause.hasDies(outcome.cause) ? undefined : Cause.findError(outcome.cause)
    if (error === undefined || Result.isFailure(error)) return finish(defectAnswer(outcome.cause, requestId), requestId)
    const problem = problemFor(options.problems, error.success)
    if (problem === undefined) return finish(defectAnswer(outcome.cause, requestId), requestId)
    // Outages are the operator's to see; error fields name what failed and never hold a secret.
    if (problem.document.status >= 500 && run.logging.any) {
      run.runFork(
        Effect.logWarning(`walletgate: ${problem.document.code}`, error.success).pipe(
          Effect.annotateLogs({ requestId })
        )
      )
    }
    return finish(problemResponse(problem.document, problem.headers), requestId, extra)
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

  /** Runs effects on the built services. */
  interface Running {
    readonly services: Context.Context<R>
    readonly logging: Logging
    readonly recording: Recording
    readonly runFork: <A, X>(effect: Effect.Effect<A, X, R>) => Fiber.Fiber<A, X>
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

  const answer = (request: GatewayRequest, run: Running): Promise<GatewayResponse> => {
    const log = run.logging
    const started = performance.now()
    const requestId = requestIdOf(request.headers["x-request-id"])
    const method = request.method.toUpperCase()
    let pattern: string | undefined
    let span: Tracer.Span | undefined
    const done = (response: GatewayResponse) => {
      if (log.requests) logRequest(request, response.status, started, requestId)
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
    // Refused whatever the route: a body of that size would never be read, and waiting for it is what an attacker
    // who declares 100 GB and sends 2 bytes wants. The answer closes the connection (the problem's headers).
    if (declaresBodyOver(request.headers["content-length"], bodyLimit)) {
      return Promise.resolve(done(finish(tooLarge, requestId)))
    }
    // HEAD is answered as the GET of the same path would be (RFC 9110 §9.3.2); `handle` drops the body.
    const match = route(method === "HEAD" ? "GET" : method, request.path)
    if (match._tag === "NotFound") return Promise.resolve(done(finish(notFound, requestId)))
    if (match._tag === "WrongMethod") {
      return Promise.resolve(done(finish(problemAnswer(new MethodNotAllowed({ allow: match.allow })), requestId)))
    }
    const found = match.route
    pattern = found.path
    if (run.recording.tracer !== undefined) span = serverSpan(run.recording.tracer, run, request, pattern, requestId)
    const context: RouteContext = { request, params: match.params, requestId, clientIp: request.remoteAddress }
    const body = found.accepts.length === 0 ? NO_BODY : parseBody(found.accepts, request, bodyLimit)
    const { answerHeaders } = found
    const outcome: Effect.Effect<Reply, Tagged, R> = Result.isSuccess(body)
      ? found.run(body.success, context, run.services)
      : Effect.fail(body.failure)
    // An outcome known at once needs no fiber (a refused body, a reply from the services alone), unless the
    // route adds headers to every answer: those are effects.
    if (isKnown(outcome) && answerHeaders === undefined) {
      return Promise.resolve(done(outcomeAnswer(outcome, undefined, run, requestId)))
    }
    const inSpan = <A, X>(effect: Effect.Effect<A, X, R>) =>
      span === undefined ? effect : Effect.withParentSpan(effect, span)
    const annotated = <A, X>(effect: Effect.Effect<A, X, R>) =>
      inSpan(log.any ? Effect.annotateLogs(effect, { requestId }) : effect)
    /** The answer to the route's exit; whatever happens, an answer. */
    const answerOf = (exit: Exit.Exit<Reply, Tagged>, extra?: HeaderMap): GatewayResponse => {
      try {
        return done(outcomeAnswer(exit, extra, run, requestId))
      } catch {
        return problemResponse(internalErrorDocument)
      }
    }
    // One fiber per request. A route whose services answer synchronously (the embedded defaults do) has finished
    // when `runFork` returns, and is answered without a promise waiting on the fiber.
    if (answerHeaders === undefined) {
      const fiber = run.runFork(annotated(outcome))
      const exit = fiber.pollUnsafe()
      if (exit !== undefined) return Promise.resolve(answerOf(exit))
      return new Promise((resolve) => fiber.addObserver((exit) => resolve(answerOf(exit))))
    }
    const withHeaders = Effect.flatMap(Effect.exit(outcome), (exit) =>
      Effect.map(answerHeaders(context), (headers) => ({ exit, headers }))
    )
    const fiber = run.runFork(annotated(withHeaders))
    return new Promise((resolve) =>
      fiber.addObserver((exit) =>
        resolve(
          Exit.isSuccess(exit) ? answerOf(exit.value.exit, exit.value.headers) : answerOf(Exit.failCause(exit.cause))
        )
      )
    )
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
      const runFork = Effect.runForkWith(services)
      running = {
        services,
        logging: loggingOf(services),
        recording: recordingOf(services),
        runFork: (effect) => runFork(effect)
      }
    }
    // A path outside the mount is not the gateway's: answered as any unknown path.
    const below = pathBelow(basePath, request.path)
    const requestId = () => requestIdOf(request.headers["x-request-id"])
    if (below === undefined) return Promise.resolve(finish(notFound, requestId()))
    const mounted = below === request.path ? request : { ...request, path: below }
    try {
      const answered = answer(mounted, running)
      const flushed = flushBeforeAnswer(answered, running)
      return request.method.toUpperCase() === "HEAD" ? flushed.then(withoutBody) : flushed
    } catch (defect) {
      // A bug before the route's effect started (its own failures are answered inside `answer`).
      return Promise.resolve(defectAnswer(Cause.die(defect)))
    }
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
