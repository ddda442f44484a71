import { createHash } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { IdempotencyStore } from "../state/IdempotencyStore"
import { InvalidRequest } from "./errors"
import type { Reply } from "./route"

/** The same Idempotency-Key came with another request. Answered 422 `idempotency_key_reused`. */
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()("IdempotencyKeyReused", {}) {}

/** The first request with this Idempotency-Key is still running. Answered 409 `idempotency_in_flight`. */
export class IdempotencyInFlight extends Schema.TaggedError<IdempotencyInFlight>()("IdempotencyInFlight", {}) {}

/** How long idempotency records are kept (DESIGN §4). */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000

const KEY = /^[\x21-\x7e]{1,255}$/

const fingerprintOf = (value: unknown): string => createHash("sha256").update(JSON.stringify(value)).digest("hex")

/**
 * Runs `run` at most once per Idempotency-Key within `scope` (DESIGN §4): the same key and request
 * get the first answer again (`idempotent-replayed: true`); the same key with another request is 422.
 * A duplicate that arrives while the first runs waits up to `waitMs` for its answer, then gets 409.
 * A typed failure gives the key up, so the request may be retried; a defect keeps it claimed, which
 * refuses retries rather than risking a second money movement.
 */
export const idempotent = <E, R>(options: {
  readonly key: string | undefined
  readonly scope: string
  readonly request: unknown
  readonly run: Effect.Effect<Reply, E, R>
  readonly waitMs?: number
}) =>
  Effect.gen(function* () {
    if (options.key === undefined) return yield* options.run
    if (!KEY.test(options.key)) {
      return yield* new InvalidRequest({
        errors: [{ path: "/headers/idempotency-key", message: "Expected 1-255 visible ASCII characters" }]
      })
    }
    const store = yield* IdempotencyStore
    const key = `${options.scope}:${options.key}`
    const fingerprint = fingerprintOf(options.request)
    const deadline = (yield* Clock.currentTimeMillis) + (options.waitMs ?? 15_000)
    while (true) {
      const now = yield* Clock.currentTimeMillis
      const claim = yield* store.claim(key, fingerprint, now, IDEMPOTENCY_TTL_MS)
      switch (claim._tag) {
        case "Mismatch":
          return yield* new IdempotencyKeyReused()
        case "Completed":
          return { ...claim.reply, headers: { "idempotent-replayed": "true" } } satisfies Reply
        case "InFlight":
          if (now >= deadline) return yield* new IdempotencyInFlight()
          yield* Effect.sleep("25 millis")
          continue
        case "Claimed": {
          const reply = yield* options.run.pipe(Effect.tapError(() => store.release(key, claim.owner)))
          yield* store.complete(
            key,
            claim.owner,
            { status: reply.status, body: reply.body },
            yield* Clock.currentTimeMillis,
            IDEMPOTENCY_TTL_MS
          )
          return reply
        }
      }
    }
  })
