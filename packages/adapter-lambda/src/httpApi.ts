import { pathBelow } from "@walletgate/core/adapter"
import type { HttpApiEvent } from "./events"
import {
  encodePath,
  headersOf,
  type Processor,
  rawBody,
  remoteAddress,
  type Settings,
  splitHeaders,
  valuesOf,
  valuesOfHeader
} from "./shared"

/**
 * API Gateway HTTP API (payload 2.0) and function URLs. `rawPath` starts with `/{stage}` when the stage is not
 * `$default`: that is the event's own framing, removed here; the gateway's `basePath` comes after it.
 */
export const httpApi = (event: HttpApiEvent, { bodyLimit }: Settings): Processor => ({
  request: () => {
    const stage = event.requestContext.stage
    const path =
      stage === undefined || stage === "$default"
        ? event.rawPath
        : (pathBelow(`/${stage}`, event.rawPath) ?? event.rawPath)
    const cookies = event.cookies ?? []
    return {
      method: event.requestContext.http.method,
      path: encodePath(path),
      query: new URLSearchParams(event.rawQueryString ?? ""),
      headers: headersOf([...valuesOf(event.headers), ...(cookies.length === 0 ? [] : [["cookie", cookies] as const])]),
      ...remoteAddress(event.requestContext.http.sourceIp),
      ...rawBody(event, bodyLimit)
    }
  },
  // Payload 2.0 has no multi-value headers: `set-cookie` goes in `cookies`, one entry per value, and any other
  // field of several values is joined as HTTP joins it (RFC 9110 §5.3).
  result: (response) => {
    const { "set-cookie": _setCookie, ...rest } = response.headers
    const { single, multi } = splitHeaders(rest)
    for (const [name, values] of Object.entries(multi)) single[name] = values.join(", ")
    const cookies = valuesOfHeader(response.headers["set-cookie"])
    return {
      statusCode: response.status,
      headers: single,
      ...(cookies.length === 0 ? {} : { cookies }),
      body: response.body,
      isBase64Encoded: false
    }
  }
})
