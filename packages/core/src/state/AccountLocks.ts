import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Semaphore from "effect/Semaphore"
import type { StoreUnavailable } from "./errors"

/** A held lock; releasing it twice is harmless. */
export interface HeldLock {
  /** A random token naming this holder: releasing frees the lock only while this holder still has it. */
  readonly owner: string
  /** Frees the lock if this holder still has it; never fails (a distributed lock frees itself after its ttl). */
  readonly release: Effect.Effect<void>
}

/**
 * Mutual exclusion per account, so that two sends or payouts of one account never run at once (their
 * nonces would collide). `acquire` waits its turn; a distributed implementation releases a holder that
 * died after `ttlMs`, and then ignores that holder's late release.
 */
export class AccountLocks extends Context.Service<
  AccountLocks,
  {
    /**
     * Waits until `key` is free, then holds it (for at most `ttlMs` where holders can die apart from us).
     * A distributed implementation waits a bounded time, then fails with `StoreUnavailable`.
     */
    readonly acquire: (key: string, ttlMs: number) => Effect.Effect<HeldLock, StoreUnavailable>
  }
>()("@walletgate/core/AccountLocks") {
  /** Locks in this process's memory: one semaphore per key while anyone holds or waits for it. */
  static readonly memory: Layer.Layer<AccountLocks> = Layer.sync(AccountLocks, () => {
    const locks = new Map<string, { readonly semaphore: Semaphore.Semaphore; users: number }>()
    return AccountLocks.of({
      acquire: (key) =>
        Effect.suspend(() => {
          const entry = locks.get(key) ?? { semaphore: Semaphore.makeUnsafe(1), users: 0 }
          entry.users += 1
          locks.set(key, entry)
          const leave = Effect.sync(() => {
            entry.users -= 1
            if (entry.users === 0) locks.delete(key)
          })
          return Semaphore.take(entry.semaphore, 1).pipe(
            Effect.onInterrupt(() => leave),
            Effect.map((): HeldLock => {
              let released = false
              return {
                owner: crypto.randomUUID(),
                release: Effect.suspend(() => {
                  if (released) return Effect.void
                  released = true
                  return Semaphore.release(entry.semaphore, 1).pipe(Effect.andThen(leave))
                })
              }
            })
          )
        })
    })
  })
}
