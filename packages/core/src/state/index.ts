// `@walletgate/core/state`: the ports for shared state (with their memory layers) and their errors, what a
// store such as `@walletgate/redis` implements.
export { AccountLocks, type HeldLock } from "./AccountLocks"
export { clientGroupOf } from "./clientGroup"
export { type RateLimited, type StateError, StoreUnavailable } from "./errors"
export { type GasBudget, GasLedger, type GasReservation } from "./GasLedger"
export {
  type IdempotencyClaim,
  type IdempotencyError,
  IdempotencyInFlight,
  IdempotencyKeyReused,
  IdempotencyStore,
  idempotencyProblems,
  type LinkedOperation,
  OutcomeUnknown,
  type StoredReply
} from "./IdempotencyStore"
export { type RateDecision, type RateLimit, RateLimiter, sharedRateScope } from "./RateLimiter"
export {
  type FinalTxStatus,
  RECENT_INDEX_MAX,
  RECENT_SCAN_MAX,
  type RecentQuery,
  recentOf,
  standingWithHash,
  TransactionLog,
  type TxOutcome,
  type TxRecord,
  TxStatus
} from "./TransactionLog"
