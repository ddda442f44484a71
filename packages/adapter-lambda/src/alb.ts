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

/**
 * The reason phrase of each status a gateway can answer (Node's `http.STATUS_CODES` from 200 on; a test keeps them
 * equal). Not imported from `node:http`: an ES module import of it makes Node read every export of the builtin,
 * `WebSocket` among them, a getter that loads undici, ≈ 40 ms of a Lambda cold start.
 */
const REASON_PHRASES: Readonly<Record<number, string>> = {
  200: "OK",
  201: "Created",
  202: "Accepted",
  203: "Non-Authoritative Information",
  204: "No Content",
  205: "Reset Content",
  206: "Partial Content",
  207: "Multi-Status",
  208: "Already Reported",
  226: "IM Used",
  300: "Multiple Choices",
  301: "Moved Permanently",
  302: "Found",
  303: "See Other",
  304: "Not Modified",
  305: "Use Proxy",
  307: "Temporary Redirect",
  308: "Permanent Redirect",
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  407: "Proxy Authentication Required",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  411: "Length Required",
  412: "Precondition Failed",
  413: "Payload Too Large",
  414: "URI Too Long",
  415: "Unsupported Media Type",
  416: "Range Not Satisfiable",
  417: "Expectation Failed",
  418: "I'm a Teapot",
  421: "Misdirected Request",
  422: "Unprocessable Entity",
  423: "Locked",
  424: "Failed Dependency",
  425: "Too Early",
  426: "Upgrade Required",
  428: "Precondition Required",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  451: "Unavailable For Legal Reasons",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
  505: "HTTP Version Not Supported",
  506: "Variant Also Negotiates",
  507: "Insufficient Storage",
  508: "Loop Detected",
  509: "Bandwidth Limit Exceeded",
  510: "Not Extended",
  511: "Network Authentication Required"
}

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
        statusDescription: `${response.status} ${REASON_PHRASES[response.status] ?? "Unknown"}`,
        ...headers,
        body: response.body,
        isBase64Encoded: false
      }
    }
  }
}
