import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/**
 * How long the first lookup waiting for the head waits for others before the read starts: a burst of lookups arriving
 * together costs one `eth_blockNumber`, at the price of this much latency (small beside the RPC round trips a lookup
 * makes). Measured on a 2-core machine, four concurrent lookups reached the head within 0.2–0.5 ms of each other
 * (9 ms for the very first burst of a process, still loading code).
 */
const GATHER_MS = 5

/**
 * `read` (the number of the chain's latest block) shared by the lookups that ask at once. One read runs at a time,
 * and a lookup waits for the next read to start rather than join one under way, whose answer may predate a block the
 * lookup's client has already seen (its own transaction's): so every lookup sees a head at least as new as any block
 * mined before it arrived. Concurrent lookups cost one read per round trip of the node, however many they are; a read
 * that fails fails the lookups that waited for it, and the next lookup reads again. The reads run in the scope's
 * fibers: a lookup interrupted while it waits leaves them to the others.
 */
export const sharedHead = <E>(
  read: Effect.Effect<bigint, E>
): Effect.Effect<Effect.Effect<bigint, E>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    /** The lookups waiting for a read that has not started yet. */
    let waiting: Deferred.Deferred<bigint, E> | undefined
    let reading = false

    const reads = Effect.gen(function* () {
      yield* Effect.sleep(GATHER_MS)
      while (waiting !== undefined) {
        const batch = waiting
        waiting = undefined
        yield* Deferred.done(batch, yield* Effect.exit(read))
      }
      reading = false
    })

    return Effect.suspend(() => {
      waiting ??= Deferred.makeUnsafe<bigint, E>()
      const batch = waiting
      if (reading) return Deferred.await(batch)
      reading = true
      return Effect.andThen(Effect.forkIn(reads, scope), Deferred.await(batch))
    })
  })
