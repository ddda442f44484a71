import { createServer, request as httpRequest } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * How the proxy treats requests: pass them, answer late, answer garbage, refuse, never answer (any request,
 * or one method's, telling `onHang`), lose one method's answer, run `hook` once the node did one method's work and
 * before its answer goes back, or answer one method with a JSON-RPC error (as a bundler refusing an operation).
 * `hangOn` and `errorOn` pass the method's first `skip` calls (since the mode was set); `errorOn` refuses `times`
 * calls after those (all of them when unset), then passes.
 */
type ProxyMode =
  | { readonly _tag: "pass" }
  | { readonly _tag: "down" }
  | { readonly _tag: "slow"; readonly ms: number }
  | { readonly _tag: "garbage" }
  | { readonly _tag: "hang" }
  | { readonly _tag: "hangOn"; readonly method: string; readonly onHang?: () => void; readonly skip?: number }
  | { readonly _tag: "loseAnswerOf"; readonly method: string }
  | { readonly _tag: "afterWorkOf"; readonly method: string; readonly hook: () => Promise<void> | void }
  | {
      readonly _tag: "errorOn"
      readonly method: string
      readonly code: number
      readonly message: string
      readonly skip?: number
      readonly times?: number
    }

/** One JSON-RPC call the proxy received. */
export interface ProxiedCall {
  readonly method: string
  readonly params: ReadonlyArray<unknown>
}

/** The JSON-RPC calls of a request body, in order (a batch counts each of its calls). */
const callsOf = (body: string): Array<ProxiedCall> => {
  try {
    const parsed: unknown = JSON.parse(body)
    const calls = Array.isArray(parsed) ? parsed : [parsed]
    return calls.map((call: unknown) => ({
      method: typeof call === "object" && call !== null && "method" in call ? String(call.method) : "?",
      params:
        typeof call === "object" && call !== null && "params" in call && Array.isArray(call.params) ? call.params : []
    }))
  } catch {
    return [{ method: "?", params: [] }]
  }
}

/** A JSON-RPC proxy on 127.0.0.1 in front of a node or a bundler: the one the tests use to inject faults and count round trips. */
export interface RpcProxy {
  /** Point a network's `rpcUrl` (or `bundlerUrl`) here. */
  readonly url: string
  /** How the next requests are treated. */
  readonly set: (mode: ProxyMode) => void
  /** The next `count` requests are answered HTTP 503 without reaching the target: a transient failure. */
  readonly failNext: (count: number) => void
  /** HTTP requests received since the last reset: the RPC round trips. */
  readonly requests: () => number
  /** The JSON-RPC methods of those requests, in order. */
  readonly methods: () => ReadonlyArray<string>
  /** Those calls with their parameters. */
  readonly calls: () => ReadonlyArray<ProxiedCall>
  readonly reset: () => void
  readonly stop: () => Promise<void>
}

/** Starts a proxy in front of `target` on a free port of 127.0.0.1, passing everything until told otherwise. */
export const startRpcProxy = async (target: string): Promise<RpcProxy> => {
  let mode: ProxyMode = { _tag: "pass" }
  // Calls of the mode's method seen since the mode was set (for `skip` and `times`).
  let seen = 0
  let requests = 0
  let calls: Array<ProxiedCall> = []
  let failing = 0
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const body = Buffer.concat(chunks)
      const current = mode
      requests += 1
      calls.push(...callsOf(body.toString()))
      if (failing > 0) {
        failing -= 1
        res.writeHead(503, { "content-type": "text/plain" }).end("node busy")
        return
      }
      if (current._tag === "down") {
        res.socket?.destroy()
        return
      }
      // The connection stays open and silent until the proxy stops.
      if (current._tag === "hang") return
      const ofMethod =
        (current._tag === "hangOn" || current._tag === "errorOn") && body.toString().includes(`"${current.method}"`)
      const nth = ofMethod ? ++seen : 0
      if (current._tag === "hangOn" && ofMethod && nth > (current.skip ?? 0)) {
        current.onHang?.()
        return
      }
      if (current._tag === "garbage") {
        res.writeHead(200, { "content-type": "application/json" })
        res.end("<html>not json-rpc</html>")
        return
      }
      if (current._tag === "errorOn") {
        const call = callsOf(body.toString())[0]
        const skip = current.skip ?? 0
        if (
          call?.method === current.method &&
          nth > skip &&
          nth <= skip + (current.times ?? Number.POSITIVE_INFINITY)
        ) {
          const id = (JSON.parse(body.toString()) as { id?: unknown }).id ?? null
          res.writeHead(200, { "content-type": "application/json" })
          res.end(JSON.stringify({ jsonrpc: "2.0", id, error: { code: current.code, message: current.message } }))
          return
        }
      }
      const forward = () => {
        const upstream = httpRequest(
          target,
          { method: "POST", headers: { "content-type": "application/json" } },
          (answer) => {
            const parts: Array<Buffer> = []
            answer.on("data", (part: Buffer) => parts.push(part))
            answer.on("end", async () => {
              if (current._tag === "afterWorkOf" && body.toString().includes(`"${current.method}"`)) {
                await current.hook()
              }
              // The node did the work; only its answer goes missing.
              if (current._tag === "loseAnswerOf" && body.toString().includes(`"${current.method}"`)) {
                res.writeHead(502)
                res.end()
                return
              }
              res.writeHead(answer.statusCode ?? 502, { "content-type": "application/json" })
              res.end(Buffer.concat(parts))
            })
          }
        )
        upstream.on("error", () => res.socket?.destroy())
        upstream.end(body)
      }
      if (current._tag === "slow") setTimeout(forward, current.ms)
      else forward()
    })
  })
  server.keepAliveTimeout = 1_000
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    set: (next) => {
      mode = next
      seen = 0
    },
    failNext: (count) => {
      failing = count
    },
    requests: () => requests,
    methods: () => calls.map((call) => call.method),
    calls: () => calls,
    reset: () => {
      requests = 0
      calls = []
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
