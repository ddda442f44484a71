import * as Effect from "effect/Effect"
import type { GatewayRequest } from "./contract"
import { InvalidRequest } from "./errors"

const KEY = /^[\x21-\x7e]{1,255}$/

/**
 * The request's `Idempotency-Key` header: `undefined` when it has none, 400 `invalid_request` when it is not 1 to 255
 * visible ASCII characters.
 */
export const idempotencyKey = (request: GatewayRequest): Effect.Effect<string | undefined, InvalidRequest> => {
  const key = request.headers["idempotency-key"]
  if (key === undefined || KEY.test(key)) return Effect.succeed(key)
  return Effect.fail(
    new InvalidRequest({
      errors: [{ path: "/headers/idempotency-key", message: "Expected 1-255 visible ASCII characters" }]
    })
  )
}
