// The two statistics bench/http reports.

/** The median of `values` (the mean of the middle two for an even count); NaN for none. */
export const median = (values: ReadonlyArray<number>): number => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2
}

/** The `q` quantile (0 to 1) of values sorted in ascending order, nearest rank; NaN for none. */
export const percentile = (sorted: ArrayLike<number>, q: number): number =>
  sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN)
