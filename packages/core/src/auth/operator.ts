import { createHash, timingSafeEqual } from "node:crypto"

/** The shortest operator token accepted: 32 characters (e.g. `openssl rand -hex 32` gives 64). */
export const OPERATOR_TOKEN_MIN_LENGTH = 32

const digest = (value: string): Buffer => createHash("sha256").update(value, "utf8").digest()

/**
 * Who the operator is: the bearer of the configured operator token, which unlocks operator-only detail (the spend
 * policy's limits and use in `GET /v1/health`). Returns whether an `Authorization` header is
 * `Bearer <token>`, compared in constant time; with no token configured, nobody is the operator. Throws a
 * `RangeError` at start for a token shorter than {@link OPERATOR_TOKEN_MIN_LENGTH}. Only the token's SHA-256 is kept.
 */
export const operatorCheck = (token?: string): ((authorization: string | undefined) => boolean) => {
  if (token !== undefined && token.length < OPERATOR_TOKEN_MIN_LENGTH) {
    throw new RangeError(`operatorToken must be at least ${OPERATOR_TOKEN_MIN_LENGTH} characters`)
  }
  const expected = token === undefined ? undefined : digest(token)
  return (authorization) => {
    if (expected === undefined || authorization === undefined) return false
    const match = /^Bearer +(\S+) *$/i.exec(authorization)
    // Digests of equal length, so the comparison takes the same time whatever was sent.
    return match?.[1] !== undefined && timingSafeEqual(digest(match[1]), expected)
  }
}
