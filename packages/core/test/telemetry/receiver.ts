// A local OTLP/HTTP receiver for the telemetry tests: a real HTTP server on 127.0.0.1 keeping every POST body.
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"

/** A local OTLP/HTTP receiver on 127.0.0.1: every POST body, by path. */
export const startReceiver = async () => {
  const received: Array<{ readonly path: string; readonly body: Buffer }> = []
  const server: Server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      received.push({ path: request.url ?? "", body: Buffer.concat(chunks) })
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

export interface KeyValue {
  readonly key: string
  readonly value: { readonly stringValue?: string; readonly intValue?: number | string }
}
export interface Span {
  readonly name: string
  readonly kind: number
  readonly traceId: string
  readonly parentSpanId?: string
  readonly attributes: ReadonlyArray<KeyValue>
}
export const attr = (span: { readonly attributes?: ReadonlyArray<KeyValue> }, key: string) => {
  const found = span.attributes?.find((a) => a.key === key)?.value
  return found?.stringValue ?? (found?.intValue === undefined ? undefined : String(found.intValue))
}

/** The spans of the OTLP JSON trace exports among `received`. */
export const spansOf = (received: ReadonlyArray<{ readonly path: string; readonly body: Buffer }>): Array<Span> =>
  received
    .filter((r) => r.path === "/v1/traces")
    .flatMap((r) =>
      (
        JSON.parse(r.body.toString("utf8")) as {
          resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<Span> }> }>
        }
      ).resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans))
    )
