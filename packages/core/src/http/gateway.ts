import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { type Gateway, type GatewayRequest, type GatewayResponse, readBodyWithin } from "./contract"
import {
  BodyRequired,
  type GatewayError,
  MalformedJson,
  MethodNotAllowed,
  PayloadTooLarge,
  RouteNotFound,
  UnsupportedMediaType
} from "./errors"
import { internalErrorDocument, problemFor, problemResponse } from "./problem"
import type { Route, RouteContext } from "./route"
import { makeRouter, type RouteMatch } from "./router"

/** The default largest body: 100 KiB. */
export const DEFAULT_BODY_LIMIT = 100 * 1024

/** How to build a gateway from routes and the layer that provides what they need. */
export interface GatewayOptions<R, E> {
  readonly routes: ReadonlyArray<Route<R>>
  readonly layer: Layer.Layer<R, E>
  /** Largest request body in bytes; default {@link DEFAULT_BODY_LIMIT}. */
  readonly bodyLimit?: number
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/
const utf8 = new TextDecoder("utf-8", { fatal: true })

/** The media type of a `content-type` value, lower-cased and without parameters. */
const mediaType = (contentType: string | undefined): string =>
  (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? ""

const parseBody = (route: Route<never> | Route<unknown>, request: GatewayRequest, limit: number) =>
  Effect.suspend((): Effect.Effect<unknown, GatewayError> => {
    const declared = Number(request.headers["content-length"] ?? "0")
    if (declared > limit || (request.rawBody?.byteLength ?? 0) > limit) {
      return Effect.fail(new PayloadTooLarge({ limit }))
    }
    // A host parser may hand over `{}` for a request that had no body at all (RFC 9112 §6.3: a body is
    // framed by Content-Length or Transfer-Encoding), so a parsed body counts only when one was framed.
    const framed = request.headers["transfer-encoding"] !== undefined || declared > 0
    const hasBody =
      request.rawBody === undefined ? request.body !== undefined && framed : request.rawBody.byteLength > 0
    if (!hasBody) return Effect.fail(new BodyRequired())
    const media = mediaType(request.headers["content-type"])
    const accepted = route.accepts.find((candidate) => candidate === media)
    if (accepted === undefined) return Effect.fail(new UnsupportedMediaType({ accepted: route.accepts }))
    if (request.body !== undefined) return Effect.succeed(request.body)
    let text: string
    try {
      text = utf8.decode(request.rawBody)
    } catch {
      return Effect.fail(new MalformedJson())
    }
    if (accepted === "application/x-www-form-urlencoded") {
      return Effect.succeed(Object.fromEntries(new URLSearchParams(text)))
    }
    try {
      return Effect.succeed(JSON.parse(text))
    } catch {
      return Effect.fail(new MalformedJson())
    }
  })

/**
 * Builds a gateway: a router over `routes`, run on a runtime built once (lazily, on first use) from
 * `layer`. Every answer is JSON or problem+json and carries `x-request-id`, `x-content-type-options:
 * nosniff` and, unless the route says otherwise, `cache-control: no-store`.
 */
export const makeGatewayFromRoutes = <R, E>(options: GatewayOptions<R, E>): Gateway => {
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT
  if (!Number.isInteger(bodyLimit) || bodyLimit < 1) throw new RangeError("bodyLimit must be a positive whole number")
  const runtime = ManagedRuntime.make(options.layer)
  const route = makeRouter(options.routes)

  const answer = (
    match: RouteMatch<R>,
    request: GatewayRequest,
    context: RouteContext
  ): Effect.Effect<GatewayResponse, GatewayError, R> =>
    Effect.gen(function* () {
      if (match._tag === "NotFound") return yield* new RouteNotFound()
      if (match._tag === "WrongMethod") return yield* new MethodNotAllowed({ allow: match.allow })
      const body = match.route.accepts.length === 0 ? undefined : yield* parseBody(match.route, request, bodyLimit)
      const reply = yield* match.route.run(body, context)
      return {
        status: reply.status,
        headers: { ...(reply.body === undefined ? {} : { "content-type": "application/json" }), ...reply.headers },
        body: reply.body === undefined ? "" : JSON.stringify(reply.body)
      }
    })

  const handleEffect = (request: GatewayRequest) => {
    const offered = request.headers["x-request-id"]
    const requestId = offered !== undefined && REQUEST_ID.test(offered) ? offered : crypto.randomUUID()
    const match = route(request.method.toUpperCase(), request.path)
    const context: RouteContext = {
      request,
      params: match._tag === "Found" ? match.params : {},
      requestId,
      clientIp: request.remoteAddress
    }
    const routeHeaders =
      match._tag === "Found" && match.route.answerHeaders !== undefined
        ? match.route.answerHeaders(context)
        : Effect.succeed({})
    const started = performance.now()
    return answer(match, request, context).pipe(
      Effect.catch((error: GatewayError) => {
        const problem = problemFor(error)
        const response = problemResponse(problem.document, problem.headers)
        // Outages are the operator's to see; error fields name what failed and never hold a secret.
        return problem.document.status >= 500
          ? Effect.logWarning(`walletgate: ${problem.document.code}`, error).pipe(Effect.as(response))
          : Effect.succeed(response)
      }),
      Effect.flatMap((response) =>
        Effect.map(
          routeHeaders,
          (headers): GatewayResponse => ({
            ...response,
            headers: { ...response.headers, ...headers }
          })
        )
      ),
      Effect.catchCause((cause) =>
        Effect.logError("walletgate: unexpected failure", Cause.pretty(cause)).pipe(
          Effect.as(problemResponse(internalErrorDocument))
        )
      ),
      Effect.map(
        (response): GatewayResponse => ({
          status: response.status,
          headers: {
            "cache-control": "no-store",
            ...response.headers,
            "x-content-type-options": "nosniff",
            "x-request-id": requestId
          },
          body: response.body
        })
      ),
      Effect.tap((response) =>
        Effect.logInfo("walletgate: request").pipe(
          Effect.annotateLogs({
            method: request.method,
            path: request.path,
            status: response.status,
            ms: Math.round(performance.now() - started)
          })
        )
      ),
      Effect.annotateLogs({ requestId })
    )
  }

  const handle = (request: GatewayRequest): Promise<GatewayResponse> =>
    runtime.runPromise(Effect.suspend(() => handleEffect(request))).catch(() => problemResponse(internalErrorDocument))

  const fetchHandler = async (request: Request): Promise<Response> => {
    const url = new URL(request.url)
    const headers: Record<string, string> = {}
    request.headers.forEach((value, name) => {
      headers[name] = value
    })
    const rawBody = request.body === null ? undefined : await readBodyWithin(chunks(request.body), bodyLimit)
    const response = await handle({
      method: request.method,
      path: url.pathname,
      query: url.searchParams,
      headers,
      ...(rawBody === undefined ? {} : { rawBody })
    })
    const empty = response.body === "" || response.status === 204 || response.status === 304
    return new Response(empty ? null : response.body, { status: response.status, headers: response.headers })
  }

  return {
    handle,
    fetch: fetchHandler,
    bodyLimit,
    ready: () => runtime.runPromise(Effect.void),
    dispose: () => runtime.dispose()
  }
}

async function* chunks(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader()
  try {
    while (true) {
      const { done, value } = await reader.read()
      if (done) return
      yield value
    }
  } finally {
    await reader.cancel().catch(() => undefined)
    reader.releaseLock()
  }
}
