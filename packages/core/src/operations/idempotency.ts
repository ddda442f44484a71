import { createHash } from "node:crypto"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { Reply } from "../http/route"
import type { StoreUnavailable } from "../state/errors"
import {
  IdempotencyInFlight,
  IdempotencyKeyReused,
  IdempotencyStore,
  type LinkedOperation,
  OutcomeUnknown
} from "../state/IdempotencyStore"

// Idempotency of money movement: a request that moves money runs at most once per Idempotency-Key, and its
// operation's record answers a retry. The transport only reads the header (`http/idempotency.ts`).

/** What links a money operation to the request's Idempotency-Key; see {@link OperationLink}. */
export interface OperationLinker {
  /** Links the operation recorded to be sent; a failure means nothing may be sent. */
  readonly link: (operation: LinkedOperation) => Effect.Effect<void, StoreUnavailable | IdempotencyInFlight>
}

/**
 * Where a money operation reports its record after recording it and before sending anything: `idempotent`
 * provides a linker that ties the request's Idempotency-Key to the record; without a key it does nothing.
 */
export const OperationLink: Context.Reference<OperationLinker> = Context.Reference<OperationLinker>(
  "@walletgate/core/OperationLink",
  { defaultValue: () => ({ link: () => Effect.void }) }
)

/** How long idempotency records are kept once an operation is linked or an answer stored (docs/security.md). */
const IDEMPOTENCY_TTL_MS = 24 * 3_600_000

/**
 * How long a claim that linked no operation holds its key: the request has sent nothing, so a request that
 * died blocks its key this long, not a day.
 */
export const IDEMPOTENCY_LEASE_MS = 120_000

/**
 * How long a duplicate waits for the answer of a request whose operation is linked (it is being sent), before
 * answering from the operation's record.
 */
const LINKED_WAIT_MS = 2_000

const fingerprintOf = (value: unknown): string => createHash("sha256").update(JSON.stringify(value)).digest("hex")

/**
 * Runs `run` at most once per Idempotency-Key within `scope` (docs/security.md): the same key and request
 * get the first answer again (`idempotent-replayed: true`); the same key with another request is 422.
 *
 * The key is claimed for a lease. `run` links its operation's record to the key (through
 * {@link OperationLink}) before it sends anything; from then on the key answers from that record
 * (`recover`) whenever no answer was stored, so a store that fails after the broadcast never costs the
 * client its answer, and a retry never runs the operation again. A duplicate that arrives while the
 * first runs waits up to `waitMs` for its answer; if nothing was linked by then it gets 409
 * (`idempotency_in_flight`: nothing was sent), otherwise the record's answer. A typed failure before the
 * link gives the key up; a defect keeps it for its lease. A failure after the link answers
 * `outcome_unknown` with the operation's id and hash, unless its record is gone (the node refused it).
 */
export const idempotent = <E, R, E2, R2>(options: {
  /** The request's Idempotency-Key as `idempotencyKey` read it; `undefined` runs `run` as it is. */
  readonly key: string | undefined
  readonly scope: string
  readonly request: unknown
  readonly run: Effect.Effect<Reply, E, R>
  /** The answer an operation's record gives now, or `undefined` when there is no record (nothing was sent). */
  readonly recover: (id: string) => Effect.Effect<Reply | undefined, E2, R2>
  readonly waitMs?: number
}) =>
  Effect.gen(function* () {
    if (options.key === undefined) return yield* options.run
    const store = yield* IdempotencyStore
    const key = `${options.scope}:${options.key}`
    const fingerprint = fingerprintOf(options.request)
    const started = yield* Clock.currentTimeMillis
    const deadline = started + (options.waitMs ?? 15_000)
    const linkedDeadline = Math.min(deadline, started + LINKED_WAIT_MS)
    const replayed = (reply: { readonly status: number; readonly body: unknown }): Reply => ({
      status: reply.status,
      body: reply.body,
      headers: { "idempotent-replayed": "true" }
    })
    /** The record's answer; `undefined` when the record is gone; `OutcomeUnknown` when it cannot be read. */
    const fromRecord = (operation: LinkedOperation) =>
      options
        .recover(operation.id)
        .pipe(Effect.catch(() => Effect.fail(new OutcomeUnknown({ id: operation.id, txHash: operation.txHash }))))

    while (true) {
      const now = yield* Clock.currentTimeMillis
      const claim = yield* store.claim(key, fingerprint, now, IDEMPOTENCY_LEASE_MS)
      switch (claim._tag) {
        case "Mismatch":
          return yield* new IdempotencyKeyReused()
        case "Completed":
          return replayed(claim.reply)
        case "InFlight":
          if (now >= deadline) return yield* new IdempotencyInFlight()
          yield* Effect.sleep("25 millis")
          continue
        case "Linked": {
          if (claim.running && now < linkedDeadline) {
            yield* Effect.sleep("25 millis")
            continue
          }
          const recovered = yield* fromRecord(claim.operation)
          if (recovered !== undefined) return replayed(recovered)
          // No record: it was discarded when the node refused the transaction, so nothing was sent.
          yield* store.release(key, claim.owner)
          continue
        }
        case "Claimed": {
          let linked: LinkedOperation | undefined
          const linker: OperationLinker = {
            link: (operation) =>
              Effect.gen(function* () {
                const at = yield* Clock.currentTimeMillis
                if (!(yield* store.link(key, claim.owner, operation, at, IDEMPOTENCY_TTL_MS))) {
                  // The lease ended and another request took the key over: this one must send nothing.
                  return yield* new IdempotencyInFlight()
                }
                linked = operation
              })
          }
          const exit = yield* options.run.pipe(Effect.provideService(OperationLink, linker), Effect.exit)
          if (Exit.isSuccess(exit)) {
            const reply = exit.value
            yield* store
              .complete(
                key,
                claim.owner,
                { status: reply.status, body: reply.body },
                yield* Clock.currentTimeMillis,
                IDEMPOTENCY_TTL_MS
              )
              .pipe(
                // The operation is linked: a retry answers from its record. This answer still goes out.
                Effect.catchTag("StoreUnavailable", () =>
                  Effect.logWarning("walletgate: the answer was not stored; a retry answers from the record")
                )
              )
            return reply
          }
          const operation: LinkedOperation | undefined = linked
          if (operation === undefined) {
            // Typed failures only: the request may be retried at once. A defect or an interruption keeps the
            // key until its lease ends.
            if (!Cause.hasDies(exit.cause) && !Cause.hasInterrupts(exit.cause)) yield* store.release(key, claim.owner)
            return yield* Effect.failCause(exit.cause)
          }
          if ((yield* fromRecord(operation)) !== undefined) {
            yield* Effect.logWarning("walletgate: a request failed after its operation was recorded").pipe(
              Effect.annotateLogs({ recordId: operation.id, txHash: operation.txHash })
            )
            return yield* new OutcomeUnknown({ id: operation.id, txHash: operation.txHash })
          }
          yield* store.release(key, claim.owner)
          return yield* Effect.failCause(exit.cause)
        }
      }
    }
  })
