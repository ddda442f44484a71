import { createHash, timingSafeEqual } from "node:crypto"

/** The shortest operator token accepted: 32 characters (e.g. `openssl rand -hex 32` gives 64). */
const OPERATOR_TOKEN_MIN_LENGTH = 32

/** One operator token and the id the audit log names its bearer by (`api:<id>@<address>`). */
export interface OperatorToken {
  /** 1 to 64 letters, digits, `.`, `_` or `-`. */
  readonly id: string
  /** At least {@link OPERATOR_TOKEN_MIN_LENGTH} characters; never logged. */
  readonly token: string
}

/** The id of the single `operatorToken` (`WALLETGATE_OPERATOR_TOKEN`) among the operator tokens. */
const DEFAULT_OPERATOR_TOKEN_ID = "default"

const digest = (value: string): Buffer => createHash("sha256").update(value, "utf8").digest()

/**
 * The operator tokens of a configuration: `operatorTokens`, and `operatorToken` as id `default`. Throws a
 * `RangeError` at start for a token shorter than {@link OPERATOR_TOKEN_MIN_LENGTH}, a malformed or repeated id, or one
 * token given twice (under two ids the audit log could not tell its bearers apart).
 */
export const operatorTokensOf = (options: {
  readonly operatorToken?: string | undefined
  readonly operatorTokens?: ReadonlyArray<OperatorToken> | undefined
}): ReadonlyArray<OperatorToken> => {
  const tokens = [
    ...(options.operatorToken === undefined ? [] : [{ id: DEFAULT_OPERATOR_TOKEN_ID, token: options.operatorToken }]),
    ...(options.operatorTokens ?? [])
  ]
  const ids = new Set<string>()
  const values = new Set<string>()
  for (const { id, token } of tokens) {
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(id)) {
      throw new RangeError("an operator token's id must be 1 to 64 letters, digits, '.', '_' or '-'")
    }
    if (ids.has(id)) throw new RangeError(`the operator token id ${id} is given twice`)
    if (token.length < OPERATOR_TOKEN_MIN_LENGTH) {
      throw new RangeError(`the operator token ${id} must be at least ${OPERATOR_TOKEN_MIN_LENGTH} characters`)
    }
    if (values.has(token)) throw new RangeError(`the operator token ${id} is the same as another one`)
    ids.add(id)
    values.add(token)
  }
  return tokens
}

/**
 * Who the operator is: the bearer of a configured operator token, which unlocks the operator API and the operator's
 * detail of `GET /v1/health`. Returns the id of the token an `Authorization: Bearer <token>` header carries, or
 * `undefined`; with no token configured, nobody is the operator. Only the tokens' SHA-256 digests are kept, and the
 * one sent is digested too, so every comparison is of 32 bytes against 32 bytes, in constant time, against every
 * token (no early exit), whatever was sent.
 */
export const operatorCheck = (
  tokens: ReadonlyArray<OperatorToken>
): ((authorization: string | undefined) => string | undefined) => {
  const expected = operatorTokensOf({ operatorTokens: tokens }).map(({ id, token }) => ({ id, digest: digest(token) }))
  return (authorization) => {
    if (expected.length === 0 || authorization === undefined) return undefined
    const match = /^Bearer +(\S+) *$/i.exec(authorization)
    if (match?.[1] === undefined) return undefined
    const sent = digest(match[1])
    let found: string | undefined
    for (const { id, digest: wanted } of expected) {
      if (timingSafeEqual(sent, wanted)) found = id
    }
    return found
  }
}
