import { alb } from "./alb"
import type { AlbEvent, HttpApiEvent, RestApiEvent } from "./events"
import { httpApi } from "./httpApi"
import { restApi } from "./restApi"
import type { Processor, Settings } from "./shared"

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The processor of an event, told apart by shape: ALB events carry `requestContext.elb`; payload 2.0 (HTTP API,
 * function URLs) `version: "2.0"`, `rawPath` and `requestContext.http`; REST (payload 1.0) `httpMethod` and
 * `path`. `undefined` for any other event. Only the fields that tell the kinds apart are checked; the others are
 * as AWS documents them, and a processor that trips over one is answered as an unsupported event.
 */
export const processorOf = (event: unknown, settings: Settings): Processor | undefined => {
  if (!isRecord(event) || !isRecord(event.requestContext)) return undefined
  const context = event.requestContext
  const classic = typeof event.httpMethod === "string" && typeof event.path === "string"
  if (isRecord(context.elb) && classic) return alb(event as unknown as AlbEvent, settings)
  if (event.version === "2.0" && typeof event.rawPath === "string" && isRecord(context.http)) {
    return httpApi(event as unknown as HttpApiEvent, settings)
  }
  if (classic) return restApi(event as unknown as RestApiEvent, settings)
  return undefined
}
