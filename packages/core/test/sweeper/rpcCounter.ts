import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"

/** A JSON-RPC HTTP proxy in front of a node that counts round trips and can play a failing node. */
export interface RpcCounter {
  /** Point a network's `rpcUrl` here. */
  readonly url: string
  /** HTTP requests received since the last reset: the RPC round trips. */
  readonly requests: () => number
  /** The JSON-RPC methods of those requests, in order (a batch counts each of its calls). */
  readonly methods: () => ReadonlyArray<string>
  readonly reset: () => void
  /** While down, every connection is cut before an answer, as when the node went away. */
  readonly setDown: (down: boolean) => void
  /** The next `count` requests are answered HTTP 503 without reaching the node: a transient failure. */
  readonly failNext: (count: number) => void
  readonly close: () => Promise<void>
}

const bodyOf = async (request: IncomingMessage): Promise<string> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
}

const methodsOf = (body: string): Array<string> => {
  try {
    const parsed: unknown = JSON.parse(body)
    const calls = Array.isArray(parsed) ? parsed : [parsed]
    return calls.map((call: unknown) =>
      typeof call === "object" && call !== null && "method" in call ? String(call.method) : "?"
    )
  } catch {
    return ["?"]
  }
}

/** Starts a counter in front of the node at `target`, on a free port of 127.0.0.1. */
export const startRpcCounter = async (target: string): Promise<RpcCounter> => {
  let requests = 0
  let methods: Array<string> = []
  let down = false
  let failing = 0
  const server = createServer((request, response) => {
    void (async () => {
      const body = await bodyOf(request)
      requests += 1
      methods.push(...methodsOf(body))
      if (down) {
        request.socket.destroy()
        return
      }
      if (failing > 0) {
        failing -= 1
        response.writeHead(503, { "content-type": "text/plain" }).end("node busy")
        return
      }
      const answer = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body })
      response.writeHead(answer.status, { "content-type": "application/json" }).end(await answer.text())
    })().catch(() => request.socket.destroy())
  })
  server.keepAliveTimeout = 1_000
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    methods: () => methods,
    reset: () => {
      requests = 0
      methods = []
    },
    setDown: (value) => {
      down = value
    },
    failNext: (count) => {
      failing = count
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
