// One way for the tests to call a gateway in process: a JSON body in, the status, headers and JSON body out.
import type { Gateway } from "@walletgate/core"

/** An answer of {@link jsonCaller}: `body` is the parsed JSON (undefined for an empty body). */
export interface JsonAnswer {
  readonly status: number
  readonly headers: Headers
  readonly body: Record<string, unknown>
}

/** Calls `gateway.fetch` with `body` as JSON (when given) and `headers`; answers with the parsed body. */
export const jsonCaller =
  (gateway: Gateway) =>
  async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<JsonAnswer> => {
    const response = await gateway.fetch(
      new Request(`http://gateway.test${path}`, {
        method,
        headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    )
    const text = await response.text()
    return {
      status: response.status,
      headers: response.headers,
      body: (text === "" ? undefined : JSON.parse(text)) as Record<string, unknown>
    }
  }
