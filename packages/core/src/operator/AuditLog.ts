import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { StoreUnavailable } from "../state/errors"
import type { AuditEntry } from "./schemas"

/** How long audit entries are kept by default: 90 days. */
export const AUDIT_RETENTION_DEFAULT_MS = 90 * 86_400_000

/** The most entries one read of the audit log returns. */
export const AUDIT_LIST_MAX = 1000

/** Settings of an {@link AuditLog} implementation. */
export interface AuditLogOptions {
  /** How long an entry is kept (ms); default {@link AUDIT_RETENTION_DEFAULT_MS}. Older entries are dropped. */
  readonly retentionMs?: number
}

/** A read of the audit log: entries at or after `since` (epoch ms), at most `limit` (1 to {@link AUDIT_LIST_MAX}). */
export interface AuditQuery {
  readonly since?: number
  readonly limit: number
}

/**
 * The operators' audit log: every change they made, append-only, read newest first, each entry kept for the
 * retention and then dropped.
 */
export class AuditLog extends Context.Service<
  AuditLog,
  {
    /** Appends an entry (its `at` is when the change was made). */
    readonly append: (entry: AuditEntry) => Effect.Effect<void, StoreUnavailable>
    /** The entries within the retention, newest first; `limit` is clamped to 1…{@link AUDIT_LIST_MAX}. */
    readonly list: (query: AuditQuery) => Effect.Effect<ReadonlyArray<AuditEntry>, StoreUnavailable>
  }
>()("@walletgate/core/AuditLog") {
  /** Entries in this process's memory: right for one instance and tests, lost on restart. */
  static readonly memory = (options: AuditLogOptions = {}): Layer.Layer<AuditLog> =>
    Layer.sync(AuditLog, () => {
      const retentionMs = auditRetention(options)
      // Oldest first, in the order appended.
      let entries: Array<{ readonly at: number; readonly entry: AuditEntry }> = []
      const forget = (now: number) => {
        const oldest = now - retentionMs
        if ((entries[0]?.at ?? oldest) < oldest) entries = entries.filter((kept) => kept.at >= oldest)
      }
      return AuditLog.of({
        append: (entry) =>
          Effect.map(Clock.currentTimeMillis, (now) => {
            forget(now)
            const at = Date.parse(entry.at)
            // Kept in time order even for an entry stamped earlier than the last one (clocks of two writers).
            let index = entries.length
            while (index > 0 && (entries[index - 1]?.at ?? 0) > at) index--
            entries.splice(index, 0, { at, entry })
          }),
        list: (query) =>
          Effect.map(Clock.currentTimeMillis, (now) => {
            forget(now)
            const since = Math.max(query.since ?? 0, now - retentionMs)
            const found: Array<AuditEntry> = []
            const limit = auditLimit(query.limit)
            for (let index = entries.length - 1; index >= 0 && found.length < limit; index--) {
              const kept = entries[index]
              if (kept !== undefined && kept.at >= since) found.push(kept.entry)
            }
            return found
          })
      })
    })
}

/** The retention of {@link AuditLogOptions}, checked: a whole number of ms from 1 to ten years. */
const auditRetention = (options: AuditLogOptions): number => {
  const retentionMs = options.retentionMs ?? AUDIT_RETENTION_DEFAULT_MS
  if (!Number.isInteger(retentionMs) || retentionMs < 1 || retentionMs > 3650 * 86_400_000) {
    throw new RangeError(`audit retentionMs must be a whole number from 1 to ${3650 * 86_400_000}`)
  }
  return retentionMs
}

/** A list limit clamped to 1…{@link AUDIT_LIST_MAX} (a non-number reads as the maximum). */
export const auditLimit = (limit: number): number =>
  Number.isFinite(limit) ? Math.min(AUDIT_LIST_MAX, Math.max(1, Math.floor(limit))) : AUDIT_LIST_MAX
