/**
 * Conformance requests as the events AWS sends, and handler results back as the responses clients get.
 * Each event starts from this folder's fixture of its kind (the shape AWS documents), with the request's
 * method, path, query, headers and body put where that kind carries them.
 */
import { readFileSync } from "node:fs"
import type { ConformanceMount, ConformanceRequest, ConformanceResponse } from "@walletgate/core/testing"
import { createHandler, type LambdaHttpEvent, type LambdaHttpHandler, type LambdaHttpResult } from "@walletgate/lambda"

/** Every kind of event an HTTP function receives, each multi-value variant included. */
export const eventKinds = [
  "REST v1",
  "REST v1 without multi-value",
  "HTTP API v2",
  "ALB",
  "ALB with multi-value headers",
  "Function URL"
] as const

/** One of {@link eventKinds}. */
export type EventKind = (typeof eventKinds)[number]

type Fields = Record<string, unknown>
type Pairs = ReadonlyArray<readonly [string, string]>

/** A fixture event of this folder as AWS sends it, as a plain object a test may change. */
export const fixture = (name: string): Fields =>
  JSON.parse(readFileSync(new URL(`./fixtures/${name}.json`, import.meta.url), "utf8"))

/** A request's parts; a body that is not text travels base64-encoded, as every kind sends binary bodies. */
interface Parts {
  readonly method: string
  readonly path: string
  readonly rawQuery: string
  readonly headers: Pairs
  readonly body?: { readonly body: string; readonly isBase64Encoded: boolean }
}

const partsOf = (request: ConformanceRequest): Parts => {
  const at = request.path.indexOf("?")
  const path = at < 0 ? request.path : request.path.slice(0, at)
  const rawQuery = at < 0 ? "" : request.path.slice(at + 1)
  const headers = Object.entries(request.headers ?? {})
  if (request.body === undefined) return { method: request.method, path, rawQuery, headers }
  const text = typeof request.body === "string"
  return {
    method: request.method,
    path,
    rawQuery,
    headers: [...headers, ["content-length", String(Buffer.byteLength(request.body))]],
    body: {
      body: text ? request.body : Buffer.from(request.body).toString("base64"),
      isBase64Encoded: !text
    }
  }
}

/** The headers the fixture's infrastructure added (host, trace id, forwarding), kept in every event. */
const infrastructureHeaders = (event: Fields): Pairs => {
  const single = Object.entries((event.headers ?? {}) as Record<string, string>)
  const multi = Object.entries((event.multiValueHeaders ?? {}) as Record<string, Array<string>>)
  return [...(single.length > 0 ? single : multi.map(([name, values]) => [name, values.join(", ")] as const))].filter(
    ([name]) => /^(host|user-agent|x-amzn-trace-id|x-forwarded-(for|port|proto))$/i.test(name)
  )
}

/** The last value of each name, as the single-value fields hold them. */
const singleValues = (pairs: Pairs): Record<string, string> => Object.fromEntries(pairs)

const multiValues = (pairs: Pairs): Record<string, Array<string>> => {
  const values: Record<string, Array<string>> = {}
  for (const [name, value] of pairs) values[name] = [...(values[name] ?? []), value]
  return values
}

const lowerCase = (pairs: Pairs): Pairs => pairs.map(([name, value]) => [name.toLowerCase(), value])
const decodedQuery = (rawQuery: string): Pairs => [...new URLSearchParams(rawQuery)]
/** ALB hands query names and values over as the client sent them, still percent-encoded. */
const encodedQuery = (rawQuery: string): Pairs =>
  rawQuery
    .split("&")
    .filter((pair) => pair !== "")
    .map((pair) => {
      const at = pair.indexOf("=")
      return at < 0 ? [pair, ""] : [pair.slice(0, at), pair.slice(at + 1)]
    })

/** API Gateway REST, payload 1.0: decoded path and query; no multi-value fields when `multiValue` is off. */
const restApi = (parts: Parts, multiValue: boolean): Fields => {
  const event = fixture("rest-v1")
  const context = event.requestContext as Fields
  const headers = [...infrastructureHeaders(event), ...parts.headers]
  const query = decodedQuery(parts.rawQuery)
  const path = decodeURIComponent(parts.path)
  const { multiValueHeaders: _headers, multiValueQueryStringParameters: _query, ...rest } = event
  return {
    ...rest,
    path,
    httpMethod: parts.method,
    pathParameters: { proxy: path.slice(1) },
    headers: singleValues(headers),
    queryStringParameters: query.length === 0 ? null : singleValues(query),
    ...(multiValue
      ? {
          multiValueHeaders: multiValues(headers),
          multiValueQueryStringParameters: query.length === 0 ? null : multiValues(query)
        }
      : {}),
    requestContext: { ...context, httpMethod: parts.method, path: `/${String(context.stage)}${path}` },
    body: parts.body?.body ?? null,
    isBase64Encoded: parts.body?.isBase64Encoded ?? false
  }
}

/** Payload 2.0 (HTTP API, function URLs): raw path and query, cookies apart, repeated values comma-joined. */
const payloadV2 = (template: string, parts: Parts): Fields => {
  const event = fixture(template)
  const context = event.requestContext as Fields
  const all = lowerCase([...infrastructureHeaders(event), ...parts.headers])
  const cookies = all.flatMap(([name, value]) => (name === "cookie" ? value.split("; ") : []))
  const joined = (pairs: Pairs) =>
    Object.fromEntries(Object.entries(multiValues(pairs)).map(([name, values]) => [name, values.join(",")]))
  const query = decodedQuery(parts.rawQuery)
  const { body: _body, cookies: _cookies, queryStringParameters: _query, ...rest } = event
  return {
    ...rest,
    rawPath: parts.path,
    rawQueryString: parts.rawQuery,
    headers: joined(all.filter(([name]) => name !== "cookie")),
    ...(cookies.length === 0 ? {} : { cookies }),
    ...(query.length === 0 ? {} : { queryStringParameters: joined(query) }),
    requestContext: { ...context, http: { ...(context.http as Fields), method: parts.method, path: parts.path } },
    ...(parts.body ?? { isBase64Encoded: false })
  }
}

/** ALB: lower-case header names, the query still encoded, `""` for no body; one field set or the other. */
const alb = (parts: Parts, multiValue: boolean): Fields => {
  const event = fixture(multiValue ? "alb-multivalue" : "alb")
  const headers = lowerCase([...infrastructureHeaders(event), ...parts.headers])
  const query = encodedQuery(parts.rawQuery)
  const {
    headers: _headers,
    multiValueHeaders: _multiValueHeaders,
    queryStringParameters: _query,
    multiValueQueryStringParameters: _multiValueQuery,
    ...rest
  } = event
  return {
    ...rest,
    httpMethod: parts.method,
    path: parts.path,
    ...(multiValue
      ? { multiValueHeaders: multiValues(headers), multiValueQueryStringParameters: multiValues(query) }
      : { headers: singleValues(headers), queryStringParameters: singleValues(query) }),
    body: parts.body?.body ?? "",
    isBase64Encoded: parts.body?.isBase64Encoded ?? false
  }
}

/** `request` as AWS would deliver it in an event of `kind`. */
export const eventFor = (kind: EventKind, request: ConformanceRequest): LambdaHttpEvent => {
  const parts = partsOf(request)
  const event = {
    "REST v1": () => restApi(parts, true),
    "REST v1 without multi-value": () => restApi(parts, false),
    "HTTP API v2": () => payloadV2("http-api-v2", parts),
    ALB: () => alb(parts, false),
    "ALB with multi-value headers": () => alb(parts, true),
    "Function URL": () => payloadV2("function-url", parts)
  }[kind]()
  // The fixtures hold every field AWS sends; the handler's type names only those it reads.
  return event as unknown as LambdaHttpEvent
}

/** What the client receives for `result`, reading only the fields the event's source reads for `kind`. */
const responseOf = (kind: EventKind, result: LambdaHttpResult): ConformanceResponse => {
  const headers: Record<string, string> = {}
  const setCookie: Array<string> = []
  const add = (name: string, value: string) => {
    const key = name.toLowerCase()
    if (key === "set-cookie") setCookie.push(value)
    else headers[key] = headers[key] === undefined ? value : `${headers[key]}, ${value}`
  }
  const single = () => {
    for (const [name, value] of Object.entries(result.headers ?? {})) add(name, value)
  }
  const multi = () => {
    for (const [name, values] of Object.entries(result.multiValueHeaders ?? {}))
      for (const value of values) add(name, value)
  }
  if (kind === "REST v1" || kind === "REST v1 without multi-value") {
    single()
    multi()
  } else if (kind === "HTTP API v2" || kind === "Function URL") {
    single()
    for (const cookie of result.cookies ?? []) add("set-cookie", cookie)
  } else if (kind === "ALB") {
    single()
  } else {
    // A target group with multi-value headers reads `multiValueHeaders` only.
    multi()
  }
  const body = result.isBase64Encoded ? Buffer.from(result.body, "base64").toString("utf8") : result.body
  return { status: result.statusCode, headers, setCookie, body }
}

/** A conformance target: each request goes to `handler` as an event of `kind`, its path below `base`. */
export const sendAsLambda =
  (kind: EventKind, handler: LambdaHttpHandler, base = "") =>
  async (request: ConformanceRequest): Promise<ConformanceResponse> =>
    responseOf(kind, await handler(eventFor(kind, { ...request, path: `${base}${request.path}` })))

/**
 * The handler as the adapter suite mounts it: fed events of `kind`, below `base` (the gateway's `basePath`),
 * through `wrap` (a deliberate difference) when given. `hostOwned` names the cases the kind cannot carry.
 */
export const lambdaMount = (
  kind: EventKind,
  base = "",
  options: {
    readonly hostOwned?: ReadonlyArray<string>
    readonly wrap?: (handler: LambdaHttpHandler) => LambdaHttpHandler
  } = {}
): ConformanceMount => ({
  name: `fed ${kind} events, ${base === "" ? "unmounted" : `mounted under ${base}`}`,
  ...(base === "" ? {} : { basePath: base }),
  ...(options.hostOwned === undefined ? {} : { hostOwned: options.hostOwned }),
  serve: async (gateway) => {
    const handler = createHandler(gateway)
    return { send: sendAsLambda(kind, options.wrap?.(handler) ?? handler, base), close: async () => undefined }
  }
})
