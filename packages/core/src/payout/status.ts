import * as Schema from "effect/Schema"

/**
 * Where one operation (part) of a payout stands: a transaction status (`submitted`, `confirmed`, `reverted`,
 * `dropped`), `failed` when it was refused before anything was sent (its `reason` says why: a recipient that reverts,
 * the ceiling), or `unsent` while it waits to be sent (a retry with the Idempotency-Key sends it).
 */
export const PartStatus = Schema.Literals(["submitted", "confirmed", "reverted", "dropped", "failed", "unsent"])
/** Where one operation of a payout stands. */
export type PartStatus = typeof PartStatus.Type

/**
 * Where a payout stands, from its operations: `submitted` while any is pending or unsent; the one status they all
 * share once every one is final (`confirmed`, `reverted`, `dropped` or `failed`); `partial` when some were confirmed
 * and others not (reverted, dropped or failed: each operation says which and why); `failed` when none was
 * confirmed and they ended differently.
 */
export const PayoutStatus = Schema.Literals(["submitted", "confirmed", "reverted", "dropped", "failed", "partial"])
/** Where a payout stands. */
export type PayoutStatus = typeof PayoutStatus.Type

/** The payout's status from its operations' (see {@link PayoutStatus}); a payout has at least one. */
export const payoutStatusOf = (parts: ReadonlyArray<PartStatus>): PayoutStatus => {
  if (parts.some((part) => part === "submitted" || part === "unsent")) return "submitted"
  const first = parts[0]
  if (first === undefined) return "submitted"
  // Only final statuses are left: none of them is `unsent` or `submitted`.
  if (parts.every((part) => part === first)) return first as Exclude<PartStatus, "submitted" | "unsent">
  return parts.includes("confirmed") ? "partial" : "failed"
}
