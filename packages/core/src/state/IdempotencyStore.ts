import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { StoreUnavailable } from "./errors"

/** How many expired records the in-memory store forgets per claim: more than one, so it keeps up with bursts. */
const EXPIRED_FORGOTTEN_PER_CLAIM = 8

/** An answer kept for replay. */
export interface StoredReply {
  readonly status: number
  readonly body: unknown
}

/** The outcome of claiming an idempotency key. */
export type IdempotencyClaim =
  | {
      readonly _tag: "Claimed"
      /** A random token naming this claim: only its holder may complete or release the key. */
      readonly owner: string
    }
  | { readonly _tag: "InFlight" }
  | { readonly _tag: "Completed"; readonly reply: StoredReply }
  | { readonly _tag: "Mismatch" }

/**
 * Idempotency records (DESIGN §4): a key is claimed once per scope with the request's fingerprint; the
 * first answer is kept for replay. Claims are atomic, so concurrent retries on any instance see one owner.
 * A claim names its owner with a random token, so that an instance whose claim expired and was claimed
 * again elsewhere can neither complete nor release the new claim.
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
    /** Stores the answer of a key claimed by `owner`, kept `ttlMs`; does nothing once the claim is not theirs. */
    readonly complete: (
      key: string,
      owner: string,
      reply: StoredReply,
      now: number,
      ttlMs: number
    ) => Effect.Effect<void, StoreUnavailable>
    /**
     * Gives up `owner`'s claim whose request failed before it changed anything, so a retry may run; does
     * nothing once the claim is not theirs or is completed.
     */
    readonly release: (key: string, owner: string) => Effect.Effect<void, StoreUnavailable>
  }
>()("@walletgate/core/IdempotencyStore") {
  /** Records in this process's memory. */
  static readonly memory: Layer.Layer<IdempotencyStore> = Layer.sync(IdempotencyStore, () => {
    interface Entry {
      readonly fingerprint: string
      readonly owner: string
      reply: StoredReply | undefined
      expiresAt: number
    }
    // Records stand in the order their keys were claimed (a claim of an expired key moves it to the end), so
    // the expired ones are at the front: each claim forgets a few of them there, and a process that runs for
    // months holds the records of the last `ttlMs`, not every key it ever saw.
    const entries = new Map<string, Entry>()
    const forgetExpired = (now: number) => {
      let budget = EXPIRED_FORGOTTEN_PER_CLAIM
      for (const [key, entry] of entries) {
        if (entry.expiresAt > now || budget-- === 0) return
        entries.delete(key)
      }
    }
    return IdempotencyStore.of({
      claim: (key, fingerprint, now, ttlMs) =>
        Effect.sync((): IdempotencyClaim => {
          forgetExpired(now)
          const entry = entries.get(key)
          if (entry === undefined || entry.expiresAt <= now) {
            const owner = crypto.randomUUID()
            entries.delete(key)
            entries.set(key, { fingerprint, owner, reply: undefined, expiresAt: now + ttlMs })
            return { _tag: "Claimed", owner }
          }
          if (entry.fingerprint !== fingerprint) return { _tag: "Mismatch" }
          return entry.reply === undefined ? { _tag: "InFlight" } : { _tag: "Completed", reply: entry.reply }
        }),
      complete: (key, owner, reply, now, ttlMs) =>
        Effect.sync(() => {
          const entry = entries.get(key)
          if (entry !== undefined && entry.owner === owner && entry.expiresAt > now) {
            entry.reply = reply
            entry.expiresAt = now + ttlMs
          }
        }),
      release: (key, owner) =>
        Effect.sync(() => {
          const entry = entries.get(key)
          if (entry?.owner === owner && entry.reply === undefined) entries.delete(key)
        })
    })
  })
}
