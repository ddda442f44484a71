import { makeExpiringMap } from "./expiringMap"

/** A counter in one fixed window of time. */
export interface CountedWindow {
  readonly start: number
  readonly end: number
  count: number
}

/**
 * Counters per key in fixed windows aligned to the epoch, in this process's memory, over the stores' one
 * expiring map: a window matters until it ends.
 */
export const makeFixedWindows = () => {
  const windows = makeExpiringMap<CountedWindow>()

  /** The key's window at `now`, if it has been opened. */
  const peek = (key: string, windowMs: number, now: number): CountedWindow | undefined => {
    const window = windows.get(key, now)
    return window?.start === now - (now % windowMs) ? window : undefined
  }

  /** The key's window at `now`, opened with a count of 0 when it has none. */
  const open = (key: string, windowMs: number, now: number): CountedWindow => {
    const start = now - (now % windowMs)
    const window = windows.get(key, now)
    if (window?.start === start) return window
    const opened = { start, end: start + windowMs, count: 0 }
    windows.set(key, opened, opened.end)
    return opened
  }

  return { peek, open }
}
