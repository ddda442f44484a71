/** How many expired entries one call forgets at most: more than one, to keep up with bursts. */
const EXPIRED_FORGOTTEN_PER_CALL = 8

/**
 * Values per key that matter until an instant, in this process's memory: the one way the in-memory stores
 * forget (codes, idempotency records, rate and gas windows). Entries stand in the order they were last set (a
 * set or an extension moves the key to the end), so with spans of one length the expired ones are at the
 * front: each read forgets a few of them there once the front one has expired, and no call walks the whole
 * map. A process that runs for months holds what matters now, not every key it ever saw. An entry with a
 * shorter span behind a longer one is forgotten when the longer one ends; reads never answer it meanwhile.
 */
export const makeExpiringMap = <V>() => {
  const entries = new Map<string, { readonly value: V; readonly until: number }>()
  /** No entry can be forgotten before this instant: at most the front entry's end (Infinity when empty). */
  let nextForget = Number.POSITIVE_INFINITY

  /** Forgets a few expired entries from the front. */
  const forgetExpired = (now: number): void => {
    if (now < nextForget) return
    let budget = EXPIRED_FORGOTTEN_PER_CALL
    for (const [key, entry] of entries) {
      if (entry.until > now) {
        nextForget = entry.until
        return
      }
      // More may have expired: the next call goes on from here.
      if (budget-- === 0) return
      entries.delete(key)
    }
    nextForget = Number.POSITIVE_INFINITY
  }

  /** Sets the key's value, mattering until `until`, at the end of the order. */
  const set = (key: string, value: V, until: number): void => {
    entries.delete(key)
    entries.set(key, { value, until })
    nextForget = Math.min(nextForget, until)
  }

  return {
    /** The key's value while it matters at `now` (after forgetting a few expired entries). */
    get: (key: string, now: number): V | undefined => {
      forgetExpired(now)
      const entry = entries.get(key)
      return entry !== undefined && entry.until > now ? entry.value : undefined
    },
    /** The key's value and its end, whether or not it still matters: for calls that carry no clock. */
    peek: (key: string): { readonly value: V; readonly until: number } | undefined => entries.get(key),
    set,
    /** Keeps the key's value until `until` instead, moved to the end; nothing when the key has no entry. */
    extend: (key: string, until: number): void => {
      const entry = entries.get(key)
      if (entry !== undefined) set(key, entry.value, until)
    },
    /** Forgets the key. */
    delete: (key: string): void => {
      entries.delete(key)
    }
  }
}
