import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { ProblemSlice } from "../internal/problem"
import type { StoreUnavailable } from "./errors"
import { makeExpiringMap } from "./expiringMap"

/** An answer kept for replay. */
export interface StoredReply {
  readonly status: number
  readonly body: unknown
}

/** The operation a claim is linked to: its record, made before anything is sent, and its transaction's hash. */
export interface LinkedOperation {
  /** The id of the operation's `TransactionLog` record. */
  readonly id: string
  readonly txHash: string
}

/** The outcome of claiming an idempotency key. */
export type IdempotencyClaim =
  | {
      readonly _tag: "Claimed"
      /** A random token naming this claim: only its holder may link, complete or release the key. */
      readonly owner: string
    }
  /** Another request holds the key and has sent nothing yet (it linked no operation). */
  | { readonly _tag: "InFlight" }
  /**
   * Another request holds the key, linked to an operation that may have been sent, and stored no answer yet:
   * the answer is the operation's record. `running` while the claim's lease lasts (its request may still
   * answer); `owner` lets a retry give the key up when the record is gone (the node refused it: nothing sent).
   */
  | {
      readonly _tag: "Linked"
      readonly owner: string
      readonly operation: LinkedOperation
      readonly running: boolean
    }
  | { readonly _tag: "Completed"; readonly reply: StoredReply }
  | { readonly _tag: "Mismatch" }

/**
 * The first request with this Idempotency-Key is still running and has sent nothing yet (or a later one
 * took the key over after its lease ended): nothing was sent by this request. Answered 409
 * `idempotency_in_flight`.
 */
export class IdempotencyInFlight extends Schema.TaggedError<IdempotencyInFlight>()("IdempotencyInFlight", {}) {}

/** The same Idempotency-Key came with another request. Answered 422 `idempotency_key_reused`. */
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()("IdempotencyKeyReused", {}) {}

/**
 * The operation was recorded and may have been sent, but how it stands could not be read (a store or a
 * node failed after the record was linked to the key). Answered 502 `outcome_unknown` with the operation's
 * `id` and `txHash`: retry with the same Idempotency-Key, or read it by id; never send it again without one.
 */
export class OutcomeUnknown extends Schema.TaggedError<OutcomeUnknown>()("OutcomeUnknown", {
  id: Schema.String,
  txHash: Schema.String
}) {}

/** The errors of idempotent requests. */
export type IdempotencyError = IdempotencyKeyReused | IdempotencyInFlight | OutcomeUnknown

/** How idempotency's errors are answered. */
export const idempotencyProblems: ProblemSlice<IdempotencyError> = {
  IdempotencyKeyReused: {
    status: 422,
    code: "idempotency_key_reused",
    title: "Idempotency key reused",
    detail: () => "This Idempotency-Key was used with another request."
  },
  IdempotencyInFlight: {
    status: 409,
    code: "idempotency_in_flight",
    title: "Request in progress",
    detail: () =>
      "The first request with this Idempotency-Key is still running and has sent nothing yet; nothing was sent. Retry shortly.",
    headers: () => ({ "retry-after": "1" })
  },
  OutcomeUnknown: {
    status: 502,
    code: "outcome_unknown",
    title: "Sent; outcome unknown",
    detail: () =>
      "The transaction was recorded and may have been sent, but its state could not be read. Retry with the same Idempotency-Key or read it by id; do not send it again without the key.",
    headers: () => ({ "retry-after": "5" }),
    extensions: (e) => ({ id: e.id, txHash: e.txHash })
  }
}

/**
 * Idempotency records (docs/security.md): a key is claimed once per scope with the request's fingerprint; the
 * first answer is kept for replay. Claims are atomic, so concurrent retries on any instance see one owner.
 * A claim names its owner with a random token, so that an instance whose claim expired and was claimed
 * again elsewhere can neither link, complete nor release the new claim.
 *
 * A claim is a lease (`leaseMs`): until it is linked to an operation, nothing was sent, and a request that
 * died only blocks its key that long. It is linked (`link`) to the operation's record before anything is
 * sent, and from then on kept `ttlMs`: a retry answers from the record even when the answer was never stored.
 */
export class IdempotencyStore extends Context.Service<
  IdempotencyStore,
  {
    /** Claims `key` for a request with `fingerprint` for `leaseMs`, or reports who has it. */
    readonly claim: (
      key: string,
      fingerprint: string,
      now: number,
      leaseMs: number
    ) => Effect.Effect<IdempotencyClaim, StoreUnavailable>
    /**
     * Links `owner`'s claim to the operation about to be sent and keeps it `ttlMs`. Linked again to the same record
     * (`id`), the hash is replaced: the record's operation was signed again (its first form refused, never
     * accepted), and a retry must learn the hash actually sent. `false` (nothing changed) when the claim is not
     * theirs any more, linked to another record, or completed: then nothing may be sent.
     */
    readonly link: (
      key: string,
      owner: string,
      operation: LinkedOperation,
      now: number,
      ttlMs: number
    ) => Effect.Effect<boolean, StoreUnavailable>
    /** Stores the answer of a key claimed by `owner`, kept `ttlMs`; does nothing once the claim is not theirs. */
    readonly complete: (
      key: string,
      owner: string,
      reply: StoredReply,
      now: number,
      ttlMs: number
    ) => Effect.Effect<void, StoreUnavailable>
    /**
     * Gives up `owner`'s claim whose request sent nothing (linked or not), so a retry may run; does nothing
     * once the claim is not theirs or is completed.
     */
    readonly release: (key: string, owner: string) => Effect.Effect<void, StoreUnavailable>
  }
>()("@walletgate/core/IdempotencyStore") {
  /** Records in this process's memory. */
  static readonly memory: Layer.Layer<IdempotencyStore> = Layer.sync(IdempotencyStore, () => {
    interface Entry {
      readonly fingerprint: string
      readonly owner: string
      readonly leaseEndsAt: number
      operation: LinkedOperation | undefined
      reply: StoredReply | undefined
    }
    // A record matters for its lease, then for `ttlMs` once linked or completed (each moves it to the end): the
    // stores' one expiring map forgets the rest, so a process that runs for months holds the records of the
    // last `ttlMs`, not every key it ever saw.
    const entries = makeExpiringMap<Entry>()
    return IdempotencyStore.of({
      claim: (key, fingerprint, now, leaseMs) =>
        Effect.sync((): IdempotencyClaim => {
          const entry = entries.get(key, now)
          if (entry === undefined) {
            const owner = crypto.randomUUID()
            entries.set(
              key,
              { fingerprint, owner, leaseEndsAt: now + leaseMs, operation: undefined, reply: undefined },
              now + leaseMs
            )
            return { _tag: "Claimed", owner }
          }
          if (entry.fingerprint !== fingerprint) return { _tag: "Mismatch" }
          if (entry.reply !== undefined) return { _tag: "Completed", reply: entry.reply }
          if (entry.operation === undefined) return { _tag: "InFlight" }
          return {
            _tag: "Linked",
            owner: entry.owner,
            operation: entry.operation,
            running: now < entry.leaseEndsAt
          }
        }),
      link: (key, owner, operation, now, ttlMs) =>
        Effect.sync(() => {
          const entry = entries.get(key, now)
          if (
            entry === undefined ||
            entry.owner !== owner ||
            (entry.operation !== undefined && entry.operation.id !== operation.id) ||
            entry.reply !== undefined
          ) {
            return false
          }
          entry.operation = { id: operation.id, txHash: operation.txHash }
          entries.extend(key, now + ttlMs)
          return true
        }),
      complete: (key, owner, reply, now, ttlMs) =>
        Effect.sync(() => {
          const entry = entries.get(key, now)
          if (entry?.owner === owner) {
            entry.reply = reply
            entries.extend(key, now + ttlMs)
          }
        }),
      release: (key, owner) =>
        Effect.sync(() => {
          const entry = entries.peek(key)?.value
          if (entry?.owner === owner && entry.reply === undefined) entries.delete(key)
        })
    })
  })
}
