import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { StoreUnavailable } from "./errors"

/** An answer kept for replay. */
export interface StoredReply {
  readonly status: number
  readonly body: unknown
}

/** The outcome of claiming an idempotency key. */
export type IdempotencyClaim =
  | { readonly _tag: "Claimed" }
  | { readonly _tag: "InFlight" }
  | { readonly _tag: "Completed"; readonly reply: StoredReply }
  | { readonly _tag: "Mismatch" }

/**
 * Idempotency records (DESIGN §4): a key is claimed once per scope with the request's fingerprint; the
 * first answer is kept for replay. Claims are atomic, so concurrent retries on any instance see one owner.
 */
export class IdempotencyStore extends Context.Service<
  IdempotencyStore,
  {
    /** Claims `key` for a request with `fingerprint`, or reports who has it. Records live `ttlMs`. */
    readonly claim: (
      key: string,
      fingerprint: string,
      now: number,
      ttlMs: number
    ) => Effect.Effect<IdempotencyClaim, StoreUnavailable>
    /** Stores the answer of a claimed key. */
    readonly complete: (
      key: string,
      reply: StoredReply,
      now: number,
      ttlMs: number
    ) => Effect.Effect<void, StoreUnavailable>
    /** Gives up a claim whose request failed before it changed anything, so a retry may run. */
    readonly release: (key: string) => Effect.Effect<void, StoreUnavailable>
  }
>()("@walletgate/core/IdempotencyStore") {
  /** Records in this process's memory. */
  static readonly memory: Layer.Layer<IdempotencyStore> = Layer.sync(IdempotencyStore, () => {
    interface Entry {
      readonly fingerprint: string
      reply: StoredReply | undefined
      expiresAt: number
    }
    const entries = new Map<string, Entry>()
    return IdempotencyStore.of({
      claim: (key, fingerprint, now, ttlMs) =>
        Effect.sync((): IdempotencyClaim => {
          const entry = entries.get(key)
          if (entry === undefined || entry.expiresAt <= now) {
            entries.set(key, { fingerprint, reply: undefined, expiresAt: now + ttlMs })
            return { _tag: "Claimed" }
          }
          if (entry.fingerprint !== fingerprint) return { _tag: "Mismatch" }
          return entry.reply === undefined ? { _tag: "InFlight" } : { _tag: "Completed", reply: entry.reply }
        }),
      complete: (key, reply, now, ttlMs) =>
        Effect.sync(() => {
          const entry = entries.get(key)
          if (entry !== undefined) {
            entry.reply = reply
            entry.expiresAt = now + ttlMs
          }
        }),
      release: (key) =>
        Effect.sync(() => {
          if (entries.get(key)?.reply === undefined) entries.delete(key)
        })
    })
  })
}
