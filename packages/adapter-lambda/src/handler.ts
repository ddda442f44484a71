import { STATUS_CODES } from "node:http"
import {
  type Gateway,
  type GatewayRequest,
  type GatewayResponse,
  internalErrorDocument,
  type ProblemDocument,
  problemResponse,
  problemType
} from "@walletgate/core"
import type {
  AlbEvent,
  HttpApiEvent,
  LambdaContext,
  LambdaHttpEvent,
  LambdaHttpResult,
  MultiValues,
  RestApiEvent,
  SingleValues
} from "./events"

/** Options of {@link createHandler}. */
export interface LambdaHandlerOptions {
  /**
   * A prefix to remove from paths that start with it: a custom domain's base path mapping
   * (`"/wallet"`), or the stage when a REST API's custom domain maps no stage (`"/prod"`).
   */
  readonly basePath?: string
  /** ALB only: take the client IP from the `X-Forwarded-For` entry the load balancer appended. */
  readonly trustProxy?: boolean
}

/** A Lambda function handler for HTTP events; it always resolves to a result and never throws. */
export type LambdaHttpHandler = (event: LambdaHttpEvent, context?: LambdaContext) => Promise<LambdaHttpResult>

/**
 * Makes the Lambda handler of `gateway` for API Gateway REST (payload 1.0), HTTP API (payload 2.0),
 * Application Load Balancer and function URL events, answering each in its own shape. Create the
 * gateway and the handler outside the function handler, at module scope, so warm invocations reuse
 * them: `export const handler = createHandler(gateway)`.
 */
export const createHandler = (gateway: Gateway, options: LambdaHandlerOptions = {}): LambdaHttpHandler => {
  const settings: Settings = {
    basePath: basePathOf(options.basePath),
    trustProxy: options.trustProxy === true,
    bodyLimit: gateway.bodyLimit
  }
  return async (event, context) => {
    const requestId = () => context?.awsRequestId ?? crypto.randomUUID()
    const translation = translationOf(event)
    if (translation === undefined) return restApiResult(unsupportedEvent(requestId(), UNKNOWN_SHAPE))
    let request: GatewayRequest
    try {
      request = translation.request(settings)
    } catch {
      return translation.result(unsupportedEvent(requestId(), MISTYPED_FIELDS))
    }
    try {
      return translation.result(withoutConnection(await gateway.handle(request)))
    } catch {
      // `handle` never rejects by contract; should it ever, the function still answers.
      return translation.result(problem(internalErrorDocument, requestId()))
    }
  }
}

interface Settings {
  readonly basePath: string
  readonly trustProxy: boolean
  readonly bodyLimit: number
}

/** One event, with the way to read it as a request and to answer it in its source's shape. */
interface Translation {
  readonly request: (settings: Settings) => GatewayRequest
  readonly result: (response: GatewayResponse) => LambdaHttpResult
}

/**
 * Tells the event kinds apart by their shape: ALB events carry `requestContext.elb`; payload 2.0
 * (HTTP API, function URLs) `version: "2.0"`, `rawPath` and `requestContext.http`; REST (payload 1.0)
 * `httpMethod` and `path`.
 */
const translationOf = (event: unknown): Translation | undefined => {
  if (!isRecord(event) || !isRecord(event.requestContext)) return undefined
  const context = event.requestContext
  const classic = typeof event.httpMethod === "string" && typeof event.path === "string"
  // Only the fields that tell the kinds apart are checked; the others are as AWS documents them,
  // and a translation that trips over one is answered as an unsupported event.
  if (isRecord(context.elb) && classic) return alb(event as unknown as AlbEvent)
  if (event.version === "2.0" && typeof event.rawPath === "string" && isRecord(context.http)) {
    return httpApi(event as unknown as HttpApiEvent)
  }
  if (classic) return restApi(event as unknown as RestApiEvent)
  return undefined
}

const restApi = (event: RestApiEvent): Translation => ({
  request: ({ basePath, bodyLimit }) => ({
    method: event.httpMethod,
    // `path` holds no stage on the execute-api endpoint; on a custom domain, `basePath` says what to remove.
    path: pathBelow(event.path, basePath),
    query: decodedQuery(valuesOf(event.queryStringParameters, event.multiValueQueryStringParameters)),
    headers: headersOf(valuesOf(event.headers, event.multiValueHeaders)),
    ...remoteAddress(event.requestContext.identity?.sourceIp),
    ...rawBody(event, bodyLimit)
  }),
  result: restApiResult
})

const httpApi = (event: HttpApiEvent): Translation => {
  const stage = event.requestContext.stage
  const cookies = event.cookies ?? []
  return {
    request: ({ basePath, bodyLimit }) => ({
      method: event.requestContext.http.method,
      path: pathBelow(event.rawPath, stage === undefined || stage === "$default" ? "" : `/${stage}`, basePath),
      query: new URLSearchParams(event.rawQueryString ?? ""),
      headers: headersOf([...valuesOf(event.headers), ...(cookies.length === 0 ? [] : [["cookie", cookies] as const])]),
      ...remoteAddress(event.requestContext.http.sourceIp),
      ...rawBody(event, bodyLimit)
    }),
    result: (response) => {
      const { "set-cookie": setCookie, ...headers } = response.headers
      return {
        statusCode: response.status,
        headers,
        ...(setCookie === undefined ? {} : { cookies: [setCookie] }),
        body: response.body,
        isBase64Encoded: false
      }
    }
  }
}

const alb = (event: AlbEvent): Translation => {
  // A target group with multi-value headers sends `multiValueHeaders` and wants them back.
  const multiValue = isRecord(event.multiValueHeaders)
  return {
    request: ({ basePath, bodyLimit, trustProxy }) => {
      const headers = headersOf(valuesOf(event.headers, event.multiValueHeaders))
      // ALB appends the address it saw to X-Forwarded-For: the right-most entry is the one to trust.
      const forwarded = trustProxy ? headers["x-forwarded-for"]?.split(",").at(-1)?.trim() : undefined
      return {
        method: event.httpMethod,
        path: pathBelow(event.path, basePath),
        query: encodedQuery(valuesOf(event.queryStringParameters, event.multiValueQueryStringParameters)),
        headers,
        ...remoteAddress(forwarded),
        ...rawBody(event, bodyLimit)
      }
    },
    result: (response) => ({
      statusCode: response.status,
      statusDescription: `${response.status} ${STATUS_CODES[response.status] ?? "Unknown"}`,
      ...(multiValue
        ? {
            multiValueHeaders: Object.fromEntries(
              Object.entries(response.headers).map(([name, value]) => [name, [value]])
            )
          }
        : { headers: response.headers }),
      body: response.body,
      isBase64Encoded: false
    })
  }
}

/** The REST API shape, also the answer to an event of no known kind (HTTP API and function URLs accept it too). */
const restApiResult = (response: GatewayResponse): LambdaHttpResult => {
  const { "set-cookie": setCookie, ...headers } = response.headers
  return {
    statusCode: response.status,
    headers,
    ...(setCookie === undefined ? {} : { multiValueHeaders: { "set-cookie": [setCookie] } }),
    body: response.body,
    isBase64Encoded: false
  }
}

type Values = ReadonlyArray<readonly [string, ReadonlyArray<string>]>

/** The name–values pairs of the multi-value field when the event has one, else of the single-value field. */
const valuesOf = (single: SingleValues | null | undefined, multi?: MultiValues | null): Values =>
  multi
    ? Object.entries(multi).flatMap(([name, values]) => (values === undefined ? [] : [[name, values] as const]))
    : Object.entries(single ?? {}).flatMap(([name, value]) => (value === undefined ? [] : [[name, [value]] as const]))

/** Lower-case names; repeated values joined as HTTP joins them (RFC 9110 §5.3, cookies RFC 6265 §5.4). */
const headersOf = (values: Values): Record<string, string> => {
  const headers = new Map<string, string>()
  for (const [name, more] of values) {
    const key = name.toLowerCase()
    const before = headers.get(key)
    headers.set(key, [...(before === undefined ? [] : [before]), ...more].join(key === "cookie" ? "; " : ", "))
  }
  // fromEntries defines each name as an own property, so a header named `__proto__` stays a header.
  return Object.fromEntries(headers)
}

/** REST API query values, which API Gateway already percent-decoded. */
const decodedQuery = (values: Values): URLSearchParams => {
  const query = new URLSearchParams()
  for (const [name, all] of values) for (const value of all) query.append(name, value)
  return query
}

/** ALB query names and values, still percent-encoded as the client sent them: decoded once, here. */
const encodedQuery = (values: Values): URLSearchParams =>
  new URLSearchParams(values.flatMap(([name, all]) => all.map((value) => `${name}=${value}`)).join("&"))

/** `path` without each prefix in turn (when it starts with it), percent-encoded. */
const pathBelow = (path: string, ...prefixes: ReadonlyArray<string>): string =>
  encodePath(prefixes.reduce((rest, prefix) => stripPrefix(rest, prefix), path))

const stripPrefix = (path: string, prefix: string): string => {
  if (prefix === "") return path
  if (path === prefix) return "/"
  return path.startsWith(`${prefix}/`) ? path.slice(prefix.length) : path
}

// API Gateway hands paths over percent-decoded (`/a b`) while the contract wants them encoded;
// encoding only what may not stand in a path (RFC 3986 §3.3) leaves an encoded path (ALB's) as it is.
const encodePath = (path: string): string =>
  path.replace(/%(?![0-9A-Fa-f]{2})|[^A-Za-z0-9\-._~!$&'()*+,;=:@/%]/gu, (char) => encodeURIComponent(char))

const remoteAddress = (address: string | undefined): { remoteAddress?: string } =>
  address === undefined || address === "" ? {} : { remoteAddress: address }

/**
 * The body's bytes (base64 decoded to bytes, never to text first), at most `limit + 1` of them: only the part of
 * the event's text that can hold them is decoded, however large the body.
 */
const rawBody = (event: Pick<RestApiEvent, "body" | "isBase64Encoded">, limit: number): { rawBody?: Uint8Array } => {
  if (event.body === undefined || event.body === null || event.body === "") return {}
  // 4 base64 characters hold 3 bytes; a UTF-8 character is at least 1 byte.
  const bytes =
    event.isBase64Encoded === true
      ? Buffer.from(event.body.slice(0, Math.ceil((limit + 1) / 3) * 4), "base64")
      : Buffer.from(event.body.slice(0, limit + 1), "utf8")
  // The core answers 413 on limit + 1 bytes. Copied into a buffer of its own: a small Buffer shares
  // Node's pool with other data.
  return { rawBody: new Uint8Array(bytes.subarray(0, limit + 1)) }
}

/**
 * The answer without `connection`: the core closes a connection after a body it did not read, but a Lambda result
 * has no connection of its own, and API Gateway does not pass the hop-by-hop field on (RFC 9110 §7.6.1).
 */
const withoutConnection = (response: GatewayResponse): GatewayResponse => {
  if (response.headers.connection === undefined) return response
  const { connection: _, ...headers } = response.headers
  return { ...response, headers }
}

const basePathOf = (basePath: string | undefined): string => {
  if (basePath === undefined) return ""
  if (!basePath.startsWith("/")) throw new TypeError(`walletgate: basePath must start with "/": ${basePath}`)
  return basePath.replace(/\/+$/, "")
}

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const UNKNOWN_SHAPE =
  "The event is not an HTTP request from API Gateway (REST or HTTP API), an Application Load Balancer or a function URL."
const MISTYPED_FIELDS = "The event's fields do not have the types AWS documents for its kind."

const unsupportedEvent = (requestId: string, detail: string): GatewayResponse =>
  problem(
    {
      type: problemType("unsupported_event"),
      title: "Unsupported event",
      status: 400,
      detail,
      code: "unsupported_event"
    },
    requestId
  )

/** An answer the adapter makes itself, with the headers the core puts on every answer. */
const problem = (document: ProblemDocument, requestId: string): GatewayResponse =>
  problemResponse(document, {
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "x-request-id": requestId
  })
