import { timingSafeEqual } from "node:crypto"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { StoreUnavailable } from "../state/errors"
import type { PhoneE164 } from "./phone"

/** A code to store for a phone: only its HMAC, never the code itself. Times are epoch milliseconds. */
export interface PendingCode {
  readonly codeHash: string
  readonly expiresAt: number
  /** No new code may be issued for this phone before this instant (a resend voids the old code). */
  readonly resendAt: number
}

/** The outcome of {@link OtpStore} `issue`. */
export type IssueOutcome =
  | { readonly _tag: "Issued" }
  | { readonly _tag: "ResendTooSoon"; readonly retryAfterMs: number }

/** The outcome of {@link OtpStore} `consume`: the code was right and is now used, or it was not. */
export type ConsumeOutcome = "Accepted" | "Rejected"

/**
 * One pending code per phone. Every operation is a single atomic step, so that concurrent requests on
 * one or many instances can neither use a code twice nor exceed the attempt limit.
 */
export class OtpStore extends Context.Service<
  OtpStore,
  {
    /** Stores `code` for `phone`, replacing (voiding) any earlier code, unless that one's resend time is still ahead. */
    readonly issue: (phone: PhoneE164, code: PendingCode, now: number) => Effect.Effect<IssueOutcome, StoreUnavailable>
    /** Removes the code issued with `codeHash`, if it is still the pending one (its SMS could not be sent). */
    readonly withdraw: (phone: PhoneE164, codeHash: string) => Effect.Effect<void, StoreUnavailable>
    /**
     * Checks a candidate: the right, unexpired code is deleted and `Accepted`; anything else counts one
     * failed attempt, and the `maxAttempts`-th failure voids the code (its resend time still holds).
     */
    readonly consume: (
      phone: PhoneE164,
      candidateHash: string,
      now: number,
      maxAttempts: number
    ) => Effect.Effect<ConsumeOutcome, StoreUnavailable>
  }
>()("@walletgate/core/OtpStore") {
  /** Codes in this process's memory: right for one instance, wrong for a fleet (use `@walletgate/redis`). */
  static readonly memory: Layer.Layer<OtpStore> = Layer.sync(OtpStore, () => {
    interface Entry {
      codeHash: string | undefined
      expiresAt: number
      resendAt: number
      failures: number
    }
    const entries = new Map<string, Entry>()
    let nextSweep = 0
    const sweep = (now: number) => {
      if (now < nextSweep) return
      nextSweep = now + 60_000
      for (const [phone, entry] of entries) if (Math.max(entry.expiresAt, entry.resendAt) <= now) entries.delete(phone)
    }
    const live = (phone: string, now: number) => {
      const entry = entries.get(phone)
      if (entry === undefined || Math.max(entry.expiresAt, entry.resendAt) > now) return entry
      entries.delete(phone)
      return undefined
    }
    return OtpStore.of({
      issue: (phone, code, now) =>
        Effect.sync((): IssueOutcome => {
          sweep(now)
          const current = live(phone, now)
          if (current !== undefined && current.resendAt > now) {
            return { _tag: "ResendTooSoon", retryAfterMs: current.resendAt - now }
          }
          entries.set(phone, {
            codeHash: code.codeHash,
            expiresAt: code.expiresAt,
            resendAt: code.resendAt,
            failures: 0
          })
          return { _tag: "Issued" }
        }),
      withdraw: (phone, codeHash) =>
        Effect.sync(() => {
          if (entries.get(phone)?.codeHash === codeHash) entries.delete(phone)
        }),
      consume: (phone, candidateHash, now, maxAttempts) =>
        Effect.sync((): ConsumeOutcome => {
          const entry = live(phone, now)
          if (entry?.codeHash === undefined || entry.expiresAt <= now) return "Rejected"
          if (sameHash(entry.codeHash, candidateHash)) {
            entries.delete(phone)
            return "Accepted"
          }
          entry.failures += 1
          if (entry.failures >= maxAttempts) entry.codeHash = undefined
          return "Rejected"
        })
    })
  })
}

/** Constant-time comparison of two hex digests. */
export const sameHash = (a: string, b: string): boolean =>
  a.length === b.length && timingSafeEqual(Buffer.from(a, "hex"), Buffer.from(b, "hex"))
