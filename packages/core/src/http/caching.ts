import { createHash } from "node:crypto"
import type { GatewayRequest } from "./contract"
import { type Reply, SerialisedJson, ServedText } from "./route"

/** A strong entity tag of a serialised body (RFC 9110 §8.8.3): its SHA-256, base64url, quoted. */
export const entityTag = (serialised: string): string =>
  `"${createHash("sha256").update(serialised).digest("base64url")}"`

/** Whether an `If-None-Match` value names `tag`: `*`, or one of its tags by weak comparison (RFC 9110 §13.1.2). */
export const noneMatch = (header: string | undefined, tag: string): boolean => {
  if (header === undefined) return false
  if (header.trim() === "*") return true
  const opaque = (value: string) => value.trim().replace(/^W\//, "")
  return header.split(",").some((candidate) => opaque(candidate) === opaque(tag))
}

/** Tags of bodies already tagged: a body kept by a server-side cache is hashed once, however often it is sent. */
const tags = new WeakMap<object, string>()

/** The entity tag of `body` as the gateway serialises it; bodies are never changed once answered. */
const tagOf = (body: unknown): string => {
  if (body instanceof SerialisedJson || body instanceof ServedText) return entityTag(body.text)
  if (typeof body !== "object" || body === null) return entityTag(JSON.stringify(body))
  const known = tags.get(body)
  if (known !== undefined) return known
  const tag = entityTag(JSON.stringify(body))
  tags.set(body, tag)
  return tag
}

/**
 * A cacheable 200 answer of `body` with a strong `ETag` and `cacheControl`; or, when the request's
 * `If-None-Match` already names that tag, a 304 without a body that carries the same `ETag` and
 * `Cache-Control` (RFC 9110 §15.4.5). The gateway serialises the body with the same `JSON.stringify`,
 * so the tag is that of the bytes sent.
 */
export const cacheableReply = (request: GatewayRequest, body: unknown, cacheControl: string): Reply => {
  const etag = tagOf(body)
  const headers = { etag, "cache-control": cacheControl }
  return noneMatch(request.headers["if-none-match"], etag)
    ? { status: 304, body: undefined, headers }
    : { status: 200, body, headers }
}
