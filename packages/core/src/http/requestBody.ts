import * as Result from "effect/Result"
import type { Tagged } from "../internal/problem"
import type { GatewayRequest } from "./contract"
import { BodyRequired, MalformedJson, PayloadTooLarge, UnsupportedMediaType } from "./errors"
import type { BodyMedia } from "./route"

const utf8 = new TextDecoder("utf-8", { fatal: true })

/** The media type of a `content-type` value, lower-cased and without parameters. */
const mediaType = (contentType: string | undefined): string => {
  if (contentType === undefined) return ""
  const end = contentType.indexOf(";")
  return (end === -1 ? contentType : contentType.slice(0, end)).trim().toLowerCase()
}

/**
 * The body a route decodes, parsed by `content-type`; a failure is the error it is answered with. Plain code,
 * run before the route's effect: every request with a body goes through it.
 */
export const parseBody = (
  accepts: ReadonlyArray<BodyMedia>,
  request: GatewayRequest,
  limit: number
): Result.Result<unknown, Tagged> => {
  // A declared length over the limit was refused before routing; bytes past it are refused here.
  const declared = Number(request.headers["content-length"] ?? "0")
  if ((request.rawBody?.byteLength ?? 0) > limit) return Result.fail(new PayloadTooLarge({ limit }))
  // A host parser may hand over `{}` for a request that had no body at all (RFC 9112 §6.3: a body is
  // framed by Content-Length or Transfer-Encoding), so a parsed body counts only when one was framed.
  const framed = request.headers["transfer-encoding"] !== undefined || declared > 0
  const hasBody = request.rawBody === undefined ? request.body !== undefined && framed : request.rawBody.byteLength > 0
  if (!hasBody) return Result.fail(new BodyRequired())
  const media = mediaType(request.headers["content-type"])
  const accepted = accepts.find((candidate) => candidate === media)
  if (accepted === undefined) return Result.fail(new UnsupportedMediaType({ accepted: accepts }))
  if (request.body !== undefined) return Result.succeed(request.body)
  let text: string
  try {
    text = utf8.decode(request.rawBody)
  } catch {
    return Result.fail(new MalformedJson())
  }
  if (accepted === "application/x-www-form-urlencoded") {
    return Result.succeed(Object.fromEntries(new URLSearchParams(text)))
  }
  try {
    return Result.succeed(JSON.parse(text))
  } catch {
    return Result.fail(new MalformedJson())
  }
}
