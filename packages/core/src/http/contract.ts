import { BodyIncomplete, transportProblems } from "./errors"
import { PROBLEM_JSON, type ProblemDocument, problemOf } from "./problem"
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

/** A response as the core hands it back to every adapter. */
export interface GatewayResponse {
  readonly status: number
  /** Lower-case header names; values are single strings. */
  readonly headers: Readonly<Record<string, string>>
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
export const methodTakesBody = (method: string): boolean => !BODYLESS_METHODS.has(method.toUpperCase())

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
const incompleteBody = (request: GatewayRequest): GatewayResponse => {
  const { document, headers } = problemOf(transportProblems.BodyIncomplete, new BodyIncomplete())
  return problemResponse(document, {
    ...headers,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "x-request-id": requestIdOf(request.headers["x-request-id"])
  })
}

/** A running walletgate: what adapters mount. Build one with `makeGateway`. */
export interface Gateway {
  /** Answers one neutral request. Never rejects: every failure is a problem+json response. */
  readonly handle: (request: GatewayRequest) => Promise<GatewayResponse>
  /** Answers a web-standard `Request`, for runtimes built on `fetch` (Deno, Bun, workers, `node:http` shims). */
  readonly fetch: (request: Request) => Promise<Response>
  /** The largest request body, in bytes, the gateway accepts; adapters read at most one byte more. */
  readonly bodyLimit: number
  /** Builds the gateway's layers now (they are otherwise built on first use); rejects on bad configuration. */
  readonly ready: () => Promise<void>
  /** Releases everything the gateway's layers acquired (connections, timers). */
  readonly dispose: () => Promise<void>
}

/** A problem document as a response. */
export const problemResponse = (
  document: ProblemDocument,
  headers: Readonly<Record<string, string>> = {}
): GatewayResponse => ({
  status: document.status,
  headers: { ...headers, "content-type": PROBLEM_JSON },
  body: JSON.stringify(document)
})
