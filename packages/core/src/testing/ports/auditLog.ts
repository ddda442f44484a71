import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { AuditLog } from "../../operator/AuditLog"
import type { AuditEntry } from "../../operator/schemas"
import { concurrently, expectEqual, type PortContractCase } from "./contract"

const DAY = 86_400_000

/** An entry made `ago` ms before `now`. */
const entry = (n: number, now: number, ago: number, extra: Partial<AuditEntry> = {}): AuditEntry => ({
  id: `aud_${n}`,
  at: new Date(now - ago).toISOString(),
  actor: "cli:alice@host1",
  action: "app.create",
  target: `wgc_${n}`,
  ...extra
})

const auditCase = (
  name: string,
  run: (log: AuditLog["Service"], now: number) => Effect.Effect<void, unknown>
): PortContractCase<AuditLog> => ({
  name,
  // Entries are stamped relative to the clock the implementation reads for its retention.
  run: Effect.flatMap(Clock.currentTimeMillis, (now) => AuditLog.use((log) => run(log, now)))
})

/** The contract of `AuditLog` with its default retention (90 days): every implementation must pass every case. */
export const auditLogContract: ReadonlyArray<PortContractCase<AuditLog>> = [
  auditCase("lists nothing before anything is appended", (log) =>
    Effect.gen(function* () {
      yield* expectEqual("list", yield* log.list({ limit: 10 }), [])
    })
  ),
  auditCase("lists entries newest first, exactly as appended", (log, now) =>
    Effect.gen(function* () {
      const first = entry(1, now, 3000, { requestId: "req-1", detail: { provider: "phone", gasPerDay: 5 } })
      const second = entry(2, now, 2000, { actor: "api:ops-1@127.0.0.1", action: "app.grant" })
      const third = entry(3, now, 1000, { action: "key.revoke", target: "abcdefghijkl" })
      yield* log.append(second)
      yield* log.append(first)
      yield* log.append(third)
      yield* expectEqual("list", yield* log.list({ limit: 10 }), [third, second, first])
    })
  ),
  auditCase("lists at most the limit, the newest, and none before since", (log, now) =>
    Effect.gen(function* () {
      const fourth = entry(3, now, 2000)
      const fifth = entry(4, now, 1000)
      yield* Effect.forEach([entry(0, now, 5000), entry(1, now, 4000), entry(2, now, 3000), fourth, fifth], log.append)
      yield* expectEqual("limit", yield* log.list({ limit: 2 }), [fifth, fourth])
      yield* expectEqual("since", yield* log.list({ since: now - 2500, limit: 10 }), [fifth, fourth])
      yield* expectEqual("a limit below 1 reads as 1", yield* log.list({ limit: 0 }), [fifth])
    })
  ),
  auditCase("drops entries older than the retention", (log, now) =>
    Effect.gen(function* () {
      const old = entry(1, now, 91 * DAY)
      const kept = entry(2, now, 89 * DAY)
      yield* log.append(old)
      yield* log.append(kept)
      yield* expectEqual("list", yield* log.list({ limit: 10 }), [kept])
      yield* expectEqual("since before the retention", yield* log.list({ since: 0, limit: 10 }), [kept])
    })
  ),
  auditCase("keeps every one of 20 entries appended concurrently", (log, now) =>
    Effect.gen(function* () {
      const made = Array.from({ length: 20 }, (_, i) => entry(i, now, 20_000 - i * 100))
      yield* concurrently(20, (i) => log.append(made[i] ?? entry(99, now, 0)))
      yield* expectEqual("list", yield* log.list({ limit: 100 }), [...made].reverse())
    })
  )
]
