// How a request of the table reaches a server: by `fetch`, on a raw socket, and on one pooled keep-alive socket.
import { connect } from "node:net"
import type { ConformanceRequest, ConformanceResponse } from "./types"

/** Sends a conformance request to an HTTP server with `fetch` and collects the response. */
export const sendOverHttp =
  (baseUrl: string) =>
  async (request: ConformanceRequest): Promise<ConformanceResponse> => {
    const response = await fetch(`${baseUrl}${request.path}`, {
      method: request.method,
      headers: request.headers ?? {},
      ...(request.body === undefined ? {} : { body: request.body })
    })
    return responseOfFetch(response)
  }

/** A web-standard `Response` as a conformance response (`Set-Cookie` fields kept apart, as `fetch` keeps them). */
export const responseOfFetch = async (response: Response): Promise<ConformanceResponse> => {
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value
  })
  return { status: response.status, headers, setCookie: response.headers.getSetCookie(), body: await response.text() }
}

/**
 * Sends a conformance request on a new TCP connection, its head exactly as given (a `Content-Length` the body does
 * not have is sent as it is; one is added only when none is given), and collects the answer once the server has
 * closed the connection: a server that keeps it open never answers here. The answer carries `connection`.
 */
export const sendOverSocket =
  (baseUrl: string) =>
  (request: ConformanceRequest): Promise<ConformanceResponse> => {
    const url = new URL(`${baseUrl}${request.path}`)
    const body = typeof request.body === "string" ? new TextEncoder().encode(request.body) : request.body
    const headers: Record<string, string> = { host: url.host, ...request.headers }
    const named = (name: string) => Object.keys(headers).some((key) => key.toLowerCase() === name)
    if (body !== undefined && !named("content-length")) headers["content-length"] = String(body.byteLength)
    const head = [
      `${request.method} ${url.pathname}${url.search} HTTP/1.1`,
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)
    ].join("\r\n")
    return new Promise((resolve, reject) => {
      const chunks: Array<Buffer> = []
      const socket = connect(Number(url.port), url.hostname, () => {
        socket.write(`${head}\r\n\r\n`)
        if (body !== undefined) socket.write(body)
      })
      socket.on("data", (chunk: Buffer) => chunks.push(chunk))
      socket.on("error", reject)
      socket.on("close", () => {
        const answer = parseAnswer(Buffer.concat(chunks).toString("utf8"))
        if (answer === undefined) reject(new Error("the server closed the connection without an answer"))
        else resolve(answer)
      })
    })
  }

/** An HTTP/1.1 answer with a `Content-Length` (or ended by the connection's close), as read from a socket. */
const parseAnswer = (raw: string): ConformanceResponse | undefined => {
  const end = raw.indexOf("\r\n\r\n")
  if (end === -1) return undefined
  const [statusLine = "", ...lines] = raw.slice(0, end).split("\r\n")
  const status = Number(statusLine.split(" ")[1])
  if (!Number.isInteger(status)) return undefined
  const headers: Record<string, string> = {}
  const setCookie: Array<string> = []
  for (const line of lines) {
    const colon = line.indexOf(":")
    if (colon <= 0) continue
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    if (name === "set-cookie") setCookie.push(value)
    else headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`
  }
  const rest = raw.slice(end + 4)
  const length = headers["content-length"]
  return { status, headers, setCookie, body: length === undefined ? rest : rest.slice(0, Number(length)) }
}

/** What {@link refusedBodyThenNext} saw: the refused request's answer, and the next request's status. */
export interface RefusedBodyOutcome {
  readonly refused: { readonly status: number; readonly connection: string | undefined }
  readonly next: number
}

/**
 * Sends a body of `bytes` (over the limit) to `${baseUrl}${path}` on a keep-alive `node:http` agent of one
 * socket, with its `Content-Length` declared or chunked, then a GET of `${baseUrl}${nextPath}` on the same agent:
 * a server that leaves the refused body unread on a connection it keeps would reset the next request
 * (`ECONNRESET`). Rejects when either request fails on the wire.
 */
export const refusedBodyThenNext = async (
  baseUrl: string,
  options: {
    readonly path: string
    readonly nextPath: string
    readonly bytes: number
    readonly framing: "declared" | "chunked"
  }
): Promise<RefusedBodyOutcome> => {
  const { Agent, request } = await import("node:http")
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const send = (method: string, path: string, body?: Uint8Array) =>
    new Promise<{ readonly status: number; readonly connection: string | undefined }>((resolve, reject) => {
      const url = new URL(`${baseUrl}${path}`)
      const headers: Record<string, string> = { "content-type": "application/json" }
      if (body !== undefined) {
        if (options.framing === "declared") headers["content-length"] = String(body.byteLength)
        else headers["transfer-encoding"] = "chunked"
      }
      const sent = request(
        { host: url.hostname, port: url.port, method, path: `${url.pathname}${url.search}`, agent, headers },
        (response) => {
          response.resume()
          response.on("error", reject)
          response.on("end", () =>
            resolve({ status: response.statusCode ?? 0, connection: response.headers.connection })
          )
        }
      )
      sent.on("error", reject)
      if (body === undefined) sent.end()
      else {
        // Chunked: the body in pieces, as a client streaming an upload sends it.
        for (let at = 0; at < body.byteLength; at += 65_536) sent.write(body.subarray(at, at + 65_536))
        sent.end()
      }
    })
  try {
    const refused = await send("POST", options.path, new Uint8Array(options.bytes).fill(0x61))
    const next = await send("GET", options.nextPath)
    return { refused, next: next.status }
  } finally {
    agent.destroy()
  }
}
