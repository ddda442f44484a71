import { timingSafeEqual } from "node:crypto"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { PhoneE164 } from "../auth/phone"
import type { StoreUnavailable } from "../state/errors"
import { makeExpiringMap } from "../state/expiringMap"

/** A code to store for a phone: only its HMAC, never the code itself. Times are epoch milliseconds. */
export interface PendingCode {
  readonly codeHash: string
  readonly expiresAt: number
  /** No new code may be issued for this phone before this instant (a resend voids the old code). */
  readonly resendAt: number
}

/**
 * The outcome of {@link OtpStore} `issue`: the code is the phone's pending one now (there was no usable code);
 * or it is held beside a code still usable, which it replaces only at `activate`; or the resend time is ahead.
 */
export type IssueOutcome =
  | { readonly _tag: "Issued" }
  | { readonly _tag: "Held" }
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
    /**
     * Claims the phone's next code, unless the resend time of the last one is still ahead. Without a usable code
     * `code` is the pending one at once (`Issued`); beside a usable one it is `Held`, not yet usable, and the
     * usable one stays so until `activate`. Either way `code.resendAt` holds from now on.
     */
    readonly issue: (phone: PhoneE164, code: PendingCode, now: number) => Effect.Effect<IssueOutcome, StoreUnavailable>
    /** Makes the code held with `codeHash` the pending one, voiding the one before (a resend voids the old code). */
    readonly activate: (phone: PhoneE164, codeHash: string) => Effect.Effect<void, StoreUnavailable>
    /**
     * Takes back the code issued with `codeHash` (it may not be sent): a held code is dropped and the resend time
     * before it restored, the earlier code untouched; a pending code is removed with its resend wait.
     */
    readonly withdraw: (phone: PhoneE164, codeHash: string) => Effect.Effect<void, StoreUnavailable>
    /**
     * Checks a candidate: the right, unexpired code is deleted and `Accepted`; anything else counts one
     * failed attempt, and the `maxAttempts`-th failure voids the code (its resend time still holds). Accepting
     * the pending code ends the phone's record, a held code with it.
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
      /** The pending code as issued, kept as it was handed over. */
      code: PendingCode
      /** No new code before this instant: the pending code's resend time, or the held one's. */
      resendAt: number
      /** Until then the entry matters: its code is usable, or its resend time is ahead. */
      until: number
      failures: number
      /** The attempt limit was reached: the code is no longer usable (its resend time still holds). */
      voided: boolean
      /** A code issued beside the usable one, waiting for `activate`, and the resend time before it. */
      held: { readonly code: PendingCode; readonly previousResendAt: number } | undefined
    }
    // Every entry matters for the same span after it was issued, so the stores' one expiring map forgets them
    // in order: a process that runs for months holds the codes of the last few minutes, not every phone it saw.
    const entries = makeExpiringMap<Entry>()
    const place = (phone: string, entry: Entry) => entries.set(phone, entry, entry.until)
    return OtpStore.of({
      issue: (phone, code, now) =>
        Effect.sync((): IssueOutcome => {
          const current = entries.get(phone, now)
          const until = Math.max(code.expiresAt, code.resendAt)
          if (current !== undefined) {
            if (current.resendAt > now) return { _tag: "ResendTooSoon", retryAfterMs: current.resendAt - now }
            if (!current.voided && current.code.expiresAt > now) {
              current.held = { code, previousResendAt: current.resendAt }
              current.resendAt = code.resendAt
              current.until = Math.max(current.until, until)
              place(phone, current)
              return HELD
            }
          }
          place(phone, { code, resendAt: code.resendAt, until, failures: 0, voided: false, held: undefined })
          return ISSUED
        }),
      activate: (phone, codeHash) =>
        Effect.sync(() => {
          const entry = entries.peek(phone)?.value
          if (entry?.held?.code.codeHash !== codeHash) return
          entry.code = entry.held.code
          entry.failures = 0
          entry.voided = false
          entry.held = undefined
        }),
      withdraw: (phone, codeHash) =>
        Effect.sync(() => {
          const entry = entries.peek(phone)?.value
          if (entry === undefined) return
          if (entry.held?.code.codeHash === codeHash) {
            entry.resendAt = entry.held.previousResendAt
            entry.held = undefined
          } else if (entry.code.codeHash === codeHash) {
            entries.delete(phone)
          }
        }),
      consume: (phone, candidateHash, now, maxAttempts) =>
        Effect.sync((): ConsumeOutcome => {
          const entry = entries.get(phone, now)
          if (entry === undefined || entry.voided || entry.code.expiresAt <= now) return "Rejected"
          if (sameHash(entry.code.codeHash, candidateHash)) {
            entries.delete(phone)
            return "Accepted"
          }
          entry.failures += 1
          if (entry.failures >= maxAttempts) entry.voided = true
          return "Rejected"
        })
    })
  })
}

const ISSUED: IssueOutcome = { _tag: "Issued" }
const HELD: IssueOutcome = { _tag: "Held" }

/** Constant-time comparison of two hex digests. */
const sameHash = (a: string, b: string): boolean =>
  a.length === b.length && timingSafeEqual(Buffer.from(a, "hex"), Buffer.from(b, "hex"))
