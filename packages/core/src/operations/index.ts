// `@walletgate/core/operations`: the transaction pipeline kernel and payout share: owner keys, account identities,
// Safe accounts, the bundler port, the spend policy, paymasters, the outcome table and the pipeline's errors.

export {
  Bundler,
  type BundlerEndpoint,
  type BundlerError,
  makeJsonRpcBundler,
  type UserOperation07
} from "./Bundler"
export {
  AccountDeploying,
  BundlerRefusedSetup,
  BundlerRejected,
  BundlerUnavailable,
  CallReverted,
  GasBudgetExhausted,
  GasCeilingExceeded,
  GasPriceAboveCap,
  type OperationError,
  operationProblems,
  PaymasterUnavailable,
  SponsorshipRefused
} from "./errors"
export {
  IDEMPOTENCY_LEASE_MS,
  IDEMPOTENCY_TTL_MS,
  idempotent,
  OperationLink,
  type OperationLinker
} from "./idempotency"
export {
  AccountIdentity,
  accountSalt,
  automationIdentity,
  testUserIdentity,
  userIdOf,
  userWalletIdentity
} from "./identity"
export { deriveOwnerKey, KeyVault } from "./KeyVault"
export type { OperationStatus } from "./operationStatus"
export { bundlerReason, type OperationOutcome, type OutcomeRow, operationOutcomes } from "./outcomes"
export { paymasterServiceClient } from "./paymasterService"
export { type GasPayer, SpendPolicy } from "./SpendPolicy"
export {
  canonicalSafe4337Contracts,
  identitySafe,
  type SafeAccount,
  type SafeCall,
  safeProxyCreationCode
} from "./safeAccount"
export { type OperationIntent, UserOperations, type UserOperationsOptions } from "./UserOperations"
