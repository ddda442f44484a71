import { STATUS_CODES } from "node:http"
import type { AlbEvent } from "./events"
import {
  encodePath,
  headersOf,
  type Processor,
  rawBody,
  remoteAddress,
  type Settings,
  splitHeaders,
  valuesOf
} from "./shared"

/** ALB query names and values, still percent-encoded as the client sent them: decoded once, here. */
const encodedQuery = (event: AlbEvent): URLSearchParams =>
  new URLSearchParams(
    valuesOf(event.queryStringParameters, event.multiValueQueryStringParameters)
      .flatMap(([name, all]) => all.map((value) => `${name}=${value}`))
      .join("&")
  )

/**
 * The client address behind an ALB: the right-most `X-Forwarded-For` entry, which the load balancer appended
 * (the entries before it are the client's to write), when the handler trusts the proxy. Without that trust,
 * none: every such request counts against one shared per-IP budget (fail closed).
 */
const forwardedFor = (headers: Readonly<Record<string, string>>, trustProxy: boolean): string | undefined =>
  trustProxy ? headers["x-forwarded-for"]?.split(",").at(-1)?.trim() : undefined

/**
 * Application Load Balancer. A target group with multi-value headers on sends `multiValueHeaders` and reads only
 * `multiValueHeaders` back; without it, one value per name, so a second `Set-Cookie` cannot be carried (the first
 * is sent): turn multi-value headers on for a gateway that sets several cookies.
 */
export const alb = (event: AlbEvent, { bodyLimit, trustProxy }: Settings): Processor => {
  const multiValue = typeof event.multiValueHeaders === "object" && event.multiValueHeaders !== null
  return {
    request: () => {
      const headers = headersOf(valuesOf(event.headers, event.multiValueHeaders))
      return {
        method: event.httpMethod,
        path: encodePath(event.path),
        query: encodedQuery(event),
        headers,
        ...remoteAddress(forwardedFor(headers, trustProxy)),
        ...rawBody(event, bodyLimit)
      }
    },
    result: (response) => {
      const { single, multi } = splitHeaders(response.headers)
      const headers = multiValue
        ? {
            multiValueHeaders: {
              ...Object.fromEntries(Object.entries(single).map(([name, value]) => [name, [value]])),
              ...multi
            }
          }
        : {
            headers: {
              ...single,
              ...Object.fromEntries(
                Object.entries(multi).map(([name, values]) => [
                  name,
                  name === "set-cookie" ? (values[0] ?? "") : values.join(", ")
                ])
              )
            }
          }
      return {
        statusCode: response.status,
        statusDescription: `${response.status} ${STATUS_CODES[response.status] ?? "Unknown"}`,
        ...headers,
        body: response.body,
        isBase64Encoded: false
      }
    }
  }
}
