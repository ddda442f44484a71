import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { AccountLocks } from "../../state/AccountLocks"
import { expectEqual, type PortContractCase } from "./contract"

// These cases run on real time (the holders of a distributed lock are elsewhere): a few seconds in all.
const KEY = "31337:0x00000000000000000000000000000000000000a1"
const OTHER_KEY = "31337:0x00000000000000000000000000000000000000a2"
/** A lifetime no case outlives, for holders that release. */
const TTL = 30_000
/** How long a case waits to conclude that an acquisition is still waiting. */
const PATIENCE_MS = 300

const lockCase = (
  name: string,
  run: (locks: AccountLocks["Service"]) => Effect.Effect<void, unknown>
): PortContractCase<AccountLocks> => ({ name, run: AccountLocks.use(run) })

/** Whether `key` can be acquired within `ms`; an acquired lock is released again. */
const freeWithin = (locks: AccountLocks["Service"], key: string, ms: number) =>
  locks.acquire(key, TTL).pipe(
    Effect.timeoutOption(ms),
    Effect.flatMap((held) => (held._tag === "Some" ? Effect.as(held.value.release, true) : Effect.succeed(false)))
  )

/** The contract of `AccountLocks`: every implementation must pass every case. */
export const accountLocksContract: ReadonlyArray<PortContractCase<AccountLocks>> = [
  lockCase("holds a free key at once, with an owner token, and frees it on release", (locks) =>
    Effect.gen(function* () {
      const held = yield* locks.acquire(KEY, TTL)
      yield* expectEqual("owner token", typeof held.owner === "string" && held.owner.length > 0, true)
      yield* expectEqual("held", yield* freeWithin(locks, KEY, PATIENCE_MS), false)
      yield* held.release
      yield* expectEqual("free after release", yield* freeWithin(locks, KEY, PATIENCE_MS), true)
    })
  ),
  lockCase("makes the next holder wait until the holder releases", (locks) =>
    Effect.gen(function* () {
      const first = yield* locks.acquire(KEY, TTL)
      let acquired = false
      const next = yield* Effect.forkChild(
        locks.acquire(KEY, TTL).pipe(
          Effect.tap(() =>
            Effect.sync(() => {
              acquired = true
            })
          )
        )
      )
      yield* Effect.sleep(PATIENCE_MS)
      yield* expectEqual("acquired while held", acquired, false)
      yield* first.release
      const second = yield* Fiber.join(next)
      yield* expectEqual("owner tokens differ", second.owner === first.owner, false)
      yield* second.release
    })
  ),
  lockCase("keeps keys apart", (locks) =>
    Effect.gen(function* () {
      const held = yield* locks.acquire(KEY, TTL)
      yield* expectEqual("other key", yield* freeWithin(locks, OTHER_KEY, PATIENCE_MS), true)
      yield* held.release
    })
  ),
  lockCase("runs 20 concurrent holders of one key strictly one at a time, and all of them", (locks) =>
    Effect.gen(function* () {
      let holding = 0
      let mostAtOnce = 0
      let finished = 0
      yield* Effect.forEach(
        Array.from({ length: 20 }),
        () =>
          Effect.gen(function* () {
            const held = yield* locks.acquire(KEY, TTL)
            holding += 1
            mostAtOnce = Math.max(mostAtOnce, holding)
            yield* Effect.sleep(5)
            holding -= 1
            finished += 1
            yield* held.release
          }),
        { concurrency: "unbounded", discard: true }
      )
      yield* expectEqual("most holders at once", mostAtOnce, 1)
      yield* expectEqual("finished", finished, 20)
    })
  ),
  lockCase("ignores a second release by an earlier holder: the next holder keeps the key", (locks) =>
    Effect.gen(function* () {
      const first = yield* locks.acquire(KEY, TTL)
      yield* first.release
      const second = yield* locks.acquire(KEY, TTL)
      yield* first.release
      yield* expectEqual("free while the second holds it", yield* freeWithin(locks, KEY, PATIENCE_MS), false)
      yield* second.release
      yield* expectEqual("free after the second releases", yield* freeWithin(locks, KEY, PATIENCE_MS), true)
    })
  ),
  lockCase("leaves the key free when a waiting acquisition is interrupted", (locks) =>
    Effect.gen(function* () {
      const held = yield* locks.acquire(KEY, TTL)
      yield* expectEqual("waiter gave up", yield* freeWithin(locks, KEY, 100), false)
      yield* held.release
      yield* expectEqual("free", yield* freeWithin(locks, KEY, PATIENCE_MS), true)
    })
  )
]

/**
 * The contract of an `AccountLocks` whose holders can die apart from the waiters (another process, a
 * Lambda): a lock frees itself after its `ttlMs`, and its late holder cannot free its successor's lock.
 * The in-memory locks do not take part: their holders die only with the whole process.
 */
export const expiringAccountLocksContract: ReadonlyArray<PortContractCase<AccountLocks>> = [
  lockCase("frees the key of a holder that never releases once its ttl ends", (locks) =>
    Effect.gen(function* () {
      yield* locks.acquire(KEY, 400)
      const started = yield* Clock.currentTimeMillis
      const next = yield* locks.acquire(KEY, TTL)
      const waited = (yield* Clock.currentTimeMillis) - started
      yield* expectEqual("waited for the ttl (about 400 ms)", waited >= 300 && waited < 5000, true)
      yield* next.release
    })
  ),
  lockCase("ignores the late release of a holder whose ttl ended", (locks) =>
    Effect.gen(function* () {
      const late = yield* locks.acquire(KEY, 200)
      const next = yield* locks.acquire(KEY, TTL)
      yield* late.release
      yield* expectEqual("free after the late release", yield* freeWithin(locks, KEY, PATIENCE_MS), false)
      yield* next.release
      yield* expectEqual("free after the next holder releases", yield* freeWithin(locks, KEY, PATIENCE_MS), true)
    })
  )
]
