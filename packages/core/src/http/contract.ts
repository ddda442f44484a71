import { BodyIncomplete, transportProblems, type UnsupportedEvent } from "./errors"
import { internalErrorDocument, PROBLEM_JSON, type ProblemDocument, problemOf } from "./problem"
import { requestIdOf } from "./requestId"

/**
 * The framework-neutral HTTP contract (docs/architecture.md). Adapters map their framework's request to a
 * {@link GatewayRequest} and write the {@link GatewayResponse} back; nothing else crosses the boundary.
 */

/** A request as every adapter hands it to the core. Header names are lower-case. */
export interface GatewayRequest {
  readonly method: string
  /** The path below the mount point, starting with `/`, still percent-encoded. */
  readonly path: string
  readonly query: URLSearchParams
  readonly headers: Readonly<Record<string, string | undefined>>
  /**
   * The body as the host application already parsed it (for example by `express.json()`), or
   * `undefined` when the host did not parse it. Mutually exclusive with {@link rawBody}.
   */
  readonly body?: unknown
  /**
   * The body's bytes as received, when the adapter read them itself (see `readBodyWithin`). The core
   * parses them according to `content-type` and enforces the size limit.
   */
  readonly rawBody?: Uint8Array
  /** The client's IP address as the host determined it (socket, or a trusted proxy header). */
  readonly remoteAddress?: string
}

/**
 * A response header's value: one string, or several for a field sent once per value. `Set-Cookie` is the one that
 * needs it (RFC 6265 §3: a cookie's `Expires` holds a comma, so its values cannot be joined); an adapter writes each
 * value as a field of its own and never splits a string.
 */
export type HeaderValue = string | ReadonlyArray<string>

/** Response headers: lower-case names. */
export type ResponseHeaders = Readonly<Record<string, HeaderValue>>

/** A response as the core hands it back to every adapter. */
export interface GatewayResponse {
  readonly status: number
  /** Lower-case header names; a field sent more than once (`set-cookie`) holds its values in order. */
  readonly headers: ResponseHeaders
  /** The serialised body (JSON or problem+json), or `""` for an empty body. */
  readonly body: string
}

/** A host's request headers, as Node's `IncomingHttpHeaders`: repeated fields may come as arrays. */
export type HostHeaders = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

const isSingleValued = (headers: HostHeaders): headers is Readonly<Record<string, string | undefined>> => {
  for (const name in headers) if (Array.isArray(headers[name])) return false
  return true
}

/**
 * A host's headers with one string per name, arrays joined with `, ` (RFC 9110 §5.3). The host's own
 * object is returned when no field is repeated, which is nearly always: adapters call this per request.
 */
export const singleValuedHeaders = (headers: HostHeaders): Readonly<Record<string, string | undefined>> => {
  if (isSingleValued(headers)) return headers
  const joined: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) joined[name] = typeof value === "string" ? value : value.join(", ")
  }
  return joined
}

const BODYLESS_METHODS = new Set(["GET", "HEAD", "DELETE", "OPTIONS"])

/** Whether an adapter should read a body for this method (GET, HEAD, DELETE and OPTIONS carry none here). */
const methodTakesBody = (method: string): boolean => !BODYLESS_METHODS.has(method.toUpperCase())

/** A body as adapters hand it to {@link readBodyWithin}: an (async) iterable of chunks, a Node stream among them. */
export type BodySource = AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>

const encoder = new TextEncoder()
const bytesOf = (chunk: Uint8Array | string): Uint8Array => (typeof chunk === "string" ? encoder.encode(chunk) : chunk)

/** The chunks joined, cut at `limit + 1` bytes. */
const joinWithin = (chunks: ReadonlyArray<Uint8Array>, size: number, limit: number): Uint8Array => {
  const out = new Uint8Array(Math.min(size, limit + 1))
  let offset = 0
  for (const chunk of chunks) {
    const room = out.byteLength - offset
    if (room <= 0) break
    const part = chunk.byteLength > room ? chunk.subarray(0, room) : chunk
    out.set(part, offset)
    offset += part.byteLength
  }
  return out
}

/**
 * Reads a body into bytes, stopping as soon as it exceeds `limit`: the result is then `limit + 1` bytes
 * long, which the core answers with 413. Adapters use it so that no adapter ever buffers more than the
 * limit. A Node stream (an `IncomingMessage`) is an async iterable: leaving it early destroys it.
 */
export const readBodyWithin = async (source: BodySource, limit: number): Promise<Uint8Array> => {
  const chunks: Array<Uint8Array> = []
  let size = 0
  for await (const chunk of source) {
    const bytes = bytesOf(chunk)
    chunks.push(bytes)
    size += bytes.byteLength
    if (size > limit) break
  }
  return joinWithin(chunks, size, limit)
}

const DECIMAL = /^[0-9]+$/

/**
 * Whether a `Content-Length` value declares a body larger than `limit` bytes. Such a request is refused (413) before
 * any of its body is read: a client may declare 100 GB and send 2 bytes, and a reader waiting for the rest would hold
 * the connection until the host's request timeout.
 */
export const declaresBodyOver = (contentLength: string | null | undefined, limit: number): boolean =>
  contentLength !== null && contentLength !== undefined && DECIMAL.test(contentLength) && Number(contentLength) > limit

/**
 * The body of a web-standard `Request`, within `limit` as {@link readBodyWithin} reads it; `undefined` when it has
 * none, and when its `Content-Length` declares more than `limit`: nothing of that body is read, and the core refuses
 * the request by that header (413), so hand it on. A body whose `Content-Length` is declared and within the limit is
 * read in one piece (`arrayBuffer()`, a few µs cheaper than iterating its stream: the runtime that made the
 * `Request` framed the body by that length, RFC 9112 §6.3); any other body is read chunk by chunk and cut at
 * `limit + 1` bytes.
 */
export const readRequestBody = async (request: Request, limit: number): Promise<Uint8Array | undefined> => {
  if (request.body === null) return undefined
  const declared = request.headers.get("content-length")
  if (declared !== null && DECIMAL.test(declared)) {
    return Number(declared) > limit ? undefined : new Uint8Array(await request.arrayBuffer())
  }
  return readBodyWithin(request.body, limit)
}

/** A host's request stream, whose body an adapter may still have to read (a Node `IncomingMessage` is one). */
export type HostStream = AsyncIterable<Uint8Array | string> & { readonly readableEnded: boolean }

/**
 * Answers `request`, whose body no host parser took, with `gateway`: when its method carries a body the host
 * has not read, after reading it from `stream` within the gateway's limit (zero bytes is no body); otherwise at
 * once, without waiting on the stream. A body declared larger than the limit is not read at all (the gateway
 * answers 413 by its `Content-Length`). A stream that fails mid-body (the client went away) is answered 400
 * `body_incomplete`: the promise never rejects, so no host logs a client's abort as a server error.
 */
export const handleReadingBody = (
  gateway: Gateway,
  request: GatewayRequest,
  stream: HostStream
): Promise<GatewayResponse> =>
  methodTakesBody(request.method) &&
  !stream.readableEnded &&
  !declaresBodyOver(request.headers["content-length"], gateway.bodyLimit)
    ? readBodyWithin(stream, gateway.bodyLimit).then(
        (rawBody) => gateway.handle(rawBody.byteLength === 0 ? request : { ...request, rawBody }),
        () => incompleteBody(request)
      )
    : gateway.handle(request)

/** The answer to a body that could not be read to its end, with the headers every answer carries. */
const incompleteBody = (request: GatewayRequest): GatewayResponse =>
  refusal(new BodyIncomplete(), request.headers["x-request-id"])

/**
 * The answer to a request an adapter cannot hand to the gateway (a Lambda event of no HTTP kind, a body that broke
 * off), with the headers every answer carries; `requestId` is the client's `X-Request-Id` or the platform's id, a
 * fresh one when absent or unusable. Adapters build no problem document of their own.
 */
export const refusal = (error: BodyIncomplete | UnsupportedEvent, requestId?: string): GatewayResponse => {
  const { document, headers } =
    error._tag === "BodyIncomplete"
      ? problemOf(transportProblems.BodyIncomplete, error)
      : problemOf(transportProblems.UnsupportedEvent, error)
  return problemResponse(document, {
    ...headers,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "x-request-id": requestIdOf(requestId)
  })
}

/**
 * The answer an adapter gives when the gateway itself failed it (`handle` rejected, which its contract rules out):
 * 500 `internal_error`, with the headers every answer carries.
 */
export const internalFailure = (requestId?: string): GatewayResponse =>
  problemResponse(internalErrorDocument, {
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "x-request-id": requestIdOf(requestId)
  })

/**
 * A mount prefix as given (`"/wallet"`, `"/wallet/"`, `"/"`), normalised: no trailing slash, `""` for the root.
 * One that does not start with `/` is refused.
 */
export const normalBasePath = (basePath: string | undefined): string => {
  if (basePath === undefined) return ""
  if (!basePath.startsWith("/")) throw new TypeError(`walletgate: basePath must start with "/": ${basePath}`)
  return basePath.replace(/\/+$/, "")
}

/**
 * The part of `path` below `prefix` (normalised by {@link normalBasePath}), starting with `/`; `undefined` when
 * `path` is outside it (`/wallet` holds `/wallet` and `/wallet/x`, not `/walletx`).
 */
export const pathBelow = (prefix: string, path: string): string | undefined => {
  if (prefix === "") return path
  if (path === prefix) return "/"
  return path.startsWith(`${prefix}/`) ? path.slice(prefix.length) : undefined
}

/** `headers` as a web-standard `Headers`, a field of several values written once per value. */
export const webHeaders = (headers: ResponseHeaders): Headers => {
  const out = new Headers()
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === "string") out.set(name, value)
    else for (const one of value) out.append(name, one)
  }
  return out
}

/** What a web-standard runtime knows of a request beyond the `Request` itself. */
export interface FetchOptions {
  /**
   * The client's IP address as the runtime determined it (Deno's `info.remoteAddr.hostname`, Bun's
   * `server.requestIP(request)?.address`). Without it, every such request counts against one shared per-IP budget.
   */
  readonly remoteAddress?: string | undefined
}

/** A running walletgate: what adapters mount. Build one with `makeGateway`. */
export interface Gateway {
  /**
   * Answers one neutral request, whose path is below the host's own mount and starts with {@link basePath}.
   * Never rejects: every failure is a problem+json response.
   */
  readonly handle: (request: GatewayRequest) => Promise<GatewayResponse>
  /** Answers a web-standard `Request`, for runtimes built on `fetch` (Deno, Bun, workers, `node:http` shims). */
  readonly fetch: (request: Request, options?: FetchOptions) => Promise<Response>
  /** The path the gateway answers below (`"/wallet"`), `""` for the root; a path outside it is not the gateway's. */
  readonly basePath: string
  /** The largest request body, in bytes, the gateway accepts; adapters read at most one byte more. */
  readonly bodyLimit: number
  /** Builds the gateway's layers now (they are otherwise built on first use); rejects on bad configuration. */
  readonly ready: () => Promise<void>
  /** Sends the telemetry buffered so far (spans, metrics, logs) now; resolves at once when nothing exports. */
  readonly flush: () => Promise<void>
  /** Releases everything the gateway's layers acquired (connections, timers). */
  readonly dispose: () => Promise<void>
}

/** A problem document as a response. */
export const problemResponse = (document: ProblemDocument, headers: ResponseHeaders = {}): GatewayResponse => ({
  status: document.status,
  headers: { ...headers, "content-type": PROBLEM_JSON },
  body: JSON.stringify(document)
})
