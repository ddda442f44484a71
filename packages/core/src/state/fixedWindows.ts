/** A counter in one fixed window of time. */
export interface CountedWindow {
  readonly start: number
  readonly end: number
  count: number
}

/** How many ended windows one call forgets at most. */
const ENDED_FORGOTTEN_PER_CALL = 8

/**
 * Counters per key in fixed windows aligned to the epoch, in this process's memory. Windows stand in the order
 * they began (a key's new window moves it to the end), so the ended ones are at the front: each call forgets a
 * few of them there once the front one has ended, and no call walks the whole map. A key with a shorter window
 * behind a longer one is forgotten when the longer one ends.
 */
export const makeFixedWindows = () => {
  const windows = new Map<string, CountedWindow>()
  /** No window can be forgotten before this instant: the front window's end (Infinity when there is none). */
  let nextForget = Number.POSITIVE_INFINITY

  /** Forgets a few ended windows from the front. */
  const forgetEnded = (now: number): void => {
    if (now < nextForget) return
    let budget = ENDED_FORGOTTEN_PER_CALL
    for (const [key, window] of windows) {
      if (window.end > now) {
        nextForget = window.end
        return
      }
      // More may have ended: the next call goes on from here.
      if (budget-- === 0) return
      windows.delete(key)
    }
    nextForget = Number.POSITIVE_INFINITY
  }

  /** The key's window at `now`, if it has been opened. */
  const peek = (key: string, windowMs: number, now: number): CountedWindow | undefined => {
    const window = windows.get(key)
    return window?.start === now - (now % windowMs) ? window : undefined
  }

  /** The key's window at `now`, opened with a count of 0 when it has none. */
  const open = (key: string, windowMs: number, now: number): CountedWindow => {
    const start = now - (now % windowMs)
    let window = windows.get(key)
    if (window?.start !== start) {
      if (window !== undefined) windows.delete(key)
      window = { start, end: start + windowMs, count: 0 }
      windows.set(key, window)
      nextForget = Math.min(nextForget, window.end)
    }
    return window
  }

  return { forgetEnded, peek, open }
}
