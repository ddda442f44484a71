// Load over loopback with autocannon's programmatic API, typed here for the part we use (autocannon ships no
// types). Latencies are taken from autocannon's own per-response timing (`response` events, in fractional ms):
// its summary histogram keeps whole milliseconds, too coarse for loopback.
import { createRequire } from "node:module"
import type { MeasuredRequest } from "./requests.ts"
import { percentile } from "./statistics.ts"

interface AutocannonRequest {
  method?: string
  path?: string
  headers?: Record<string, string>
  body?: string | Buffer
}

interface AutocannonOptions {
  readonly url: string
  readonly connections: number
  readonly duration: number
  readonly pipelining: number
  readonly timeout: number
  readonly requests: ReadonlyArray<
    AutocannonRequest & { setupRequest?: (request: AutocannonRequest) => AutocannonRequest }
  >
}

interface AutocannonResult {
  readonly errors: number
  readonly timeouts: number
  readonly statusCodeStats: Readonly<Record<string, { readonly count: number }>>
  readonly requests: { readonly average: number; readonly total: number }
  readonly duration: number
}

interface AutocannonInstance {
  on(
    event: "response",
    listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void
  ): void
}

type Autocannon = (
  options: AutocannonOptions,
  done: (error: Error | null, result: AutocannonResult) => void
) => AutocannonInstance

const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon

/** What one load run measured. */
export interface LoadResult {
  /** autocannon's figure: the mean of its per-second samples. */
  readonly requestsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly responses: number
  /** Responses by status code. */
  readonly statuses: Readonly<Record<string, number>>
  readonly errors: number
  readonly timeouts: number
}

/** How a run is made. */
export interface LoadSettings {
  readonly connections: number
  readonly durationSeconds: number
}

/**
 * Sends `request` to `origin` for the run's duration over `connections` keep-alive connections, one request
 * in flight on each. A request with a body gets body `next()` each time (the counter is the caller's, so that
 * a warm-up and the run after it never repeat a body).
 */
export const load = (
  origin: string,
  request: MeasuredRequest,
  settings: LoadSettings,
  next: () => number
): Promise<LoadResult> =>
  new Promise((resolve, reject) => {
    const latencies: Array<number> = []
    const { body } = request
    const base: AutocannonRequest = {
      method: request.method,
      path: request.path,
      ...(body === undefined ? {} : { headers: { "content-type": "application/json" } })
    }
    const instance = autocannon(
      {
        url: origin,
        connections: settings.connections,
        duration: settings.durationSeconds,
        pipelining: 1,
        timeout: 10,
        requests: [body === undefined ? base : { ...base, setupRequest: (built) => ({ ...built, body: body(next()) }) }]
      },
      (error, result) => {
        if (error !== null) {
          reject(error)
          return
        }
        const sorted = Float64Array.from(latencies).sort()
        resolve({
          requestsPerSecond: result.requests.average,
          p50Ms: percentile(sorted, 0.5),
          p99Ms: percentile(sorted, 0.99),
          responses: latencies.length,
          statuses: Object.fromEntries(
            Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count])
          ),
          errors: result.errors,
          timeouts: result.timeouts
        })
      }
    )
    instance.on("response", (_client, _status, _bytes, responseTimeMs) => {
      latencies.push(responseTimeMs)
    })
  })
