// `@walletgate/core/operations`: the transaction pipeline kernel and payout share: the bundler port, owner keys,
// account identities, Safe accounts, the spend policy, the outcome table and the pipeline's errors (as types).

export { Bundler, type BundlerEndpoint, type BundlerError, makeJsonRpcBundler, type UserOperation07 } from "./Bundler"
export type {
  AccountDeploying,
  BundlerBusy,
  BundlerRefusedSetup,
  BundlerRejected,
  BundlerUnavailable,
  CallReverted,
  GasBudgetExhausted,
  GasCeilingExceeded,
  GasPriceAboveCap,
  OperationError,
  PaymasterUnavailable,
  SponsorshipRefused
} from "./errors"
export { OperationLink, type OperationLinker } from "./idempotency"
export { type AccountIdentity, accountSalt, automationIdentity, testUserIdentity, userWalletIdentity } from "./identity"
export { KeyVault } from "./KeyVault"
export type { OperationStatus } from "./operationStatus"
export type { OperationOutcome, OutcomeRow } from "./outcomes"
export { type GasPayer, SpendPolicy } from "./SpendPolicy"
export { identitySafe, type SafeAccount, type SafeCall } from "./safeAccount"
export type { OperationIntent, UserOperations, UserOperationsOptions } from "./UserOperations"
