import type { GatewayRequest, GatewayResponse, HeaderValue, ResponseHeaders } from "@walletgate/core/adapter"
import type { LambdaHttpResult, MultiValues, RestApiEvent, SingleValues } from "./events"

/** What every event processor is handed besides its event. */
export interface Settings {
  /** ALB only: the client address is the `X-Forwarded-For` entry the load balancer appended. */
  readonly trustProxy: boolean
  readonly bodyLimit: number
}

/** One event read as a request, and the way to answer it in its source's shape. */
export interface Processor {
  /** The request; throws when a field does not have the type AWS documents (the handler refuses the event). */
  readonly request: () => GatewayRequest
  readonly result: (response: GatewayResponse) => LambdaHttpResult
}

/** Name–values pairs, read from an event's single- or multi-value fields. */
export type Values = ReadonlyArray<readonly [string, ReadonlyArray<string>]>

/** The name–values pairs of the multi-value field when the event has one, else of the single-value field. */
export const valuesOf = (single: SingleValues | null | undefined, multi?: MultiValues | null): Values =>
  multi
    ? Object.entries(multi).flatMap(([name, values]) => (values === undefined ? [] : [[name, values] as const]))
    : Object.entries(single ?? {}).flatMap(([name, value]) => (value === undefined ? [] : [[name, [value]] as const]))

/** Lower-case names; repeated values joined as HTTP joins them (RFC 9110 §5.3, cookies RFC 6265 §5.4). */
export const headersOf = (values: Values): Record<string, string> => {
  const headers = new Map<string, string>()
  for (const [name, more] of values) {
    const key = name.toLowerCase()
    const before = headers.get(key)
    headers.set(key, [...(before === undefined ? [] : [before]), ...more].join(key === "cookie" ? "; " : ", "))
  }
  // fromEntries defines each name as an own property, so a header named `__proto__` stays a header.
  return Object.fromEntries(headers)
}

// API Gateway hands paths over percent-decoded (`/a b`) while the contract wants them encoded;
// encoding only what may not stand in a path (RFC 3986 §3.3) leaves an encoded path (ALB's) as it is.
export const encodePath = (path: string): string =>
  path.replace(/%(?![0-9A-Fa-f]{2})|[^A-Za-z0-9\-._~!$&'()*+,;=:@/%]/gu, (char) => encodeURIComponent(char))

/** The client address, when there is one. */
export const remoteAddress = (address: string | undefined): { remoteAddress?: string } =>
  address === undefined || address === "" ? {} : { remoteAddress: address }

/**
 * The body's bytes (base64 decoded to bytes, never to text first), at most `limit + 1` of them: only the part of
 * the event's text that can hold them is decoded, however large the body.
 */
export const rawBody = (
  event: Pick<RestApiEvent, "body" | "isBase64Encoded">,
  limit: number
): { rawBody?: Uint8Array } => {
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
 * The answer's headers without `connection` (the core closes a connection after a body it did not read, but a
 * Lambda result has no connection of its own, and API Gateway does not pass the hop-by-hop field on, RFC 9110
 * §7.6.1), split into the fields of one value and those of several (`set-cookie`).
 */
export const splitHeaders = (
  headers: ResponseHeaders
): { readonly single: Record<string, string>; readonly multi: Record<string, Array<string>> } => {
  const single: Record<string, string> = {}
  const multi: Record<string, Array<string>> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (name === "connection") continue
    if (typeof value === "string") single[name] = value
    else multi[name] = [...value]
  }
  return { single, multi }
}

/** Every value of a header, in order. */
export const valuesOfHeader = (value: HeaderValue | undefined): Array<string> =>
  value === undefined ? [] : typeof value === "string" ? [value] : [...value]
