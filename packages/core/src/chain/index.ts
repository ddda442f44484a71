// `@walletgate/core/chain`: networks, owner keys, account identities, the spend policy and the chain's errors.
// Contract bytecode and deployment are under `@walletgate/core/devnet`.

export { Bundler, type BundlerEndpoint, type BundlerError, makeJsonRpcBundler, type UserOperation07 } from "./Bundler"
export {
  type AccountDeploying,
  type BundlerRefusedSetup,
  type BundlerRejected,
  type BundlerUnavailable,
  type CallReverted,
  type ChainError,
  ChainUnavailable,
  type GasBudgetExhausted,
  type GasCeilingExceeded,
  type PaymasterUnavailable,
  type SponsorshipRefused,
  type UnsupportedChain
} from "./errors"
export { type AccountIdentity, accountSalt, automationIdentity, testUserIdentity, userWalletIdentity } from "./identity"
export { KeyVault } from "./KeyVault"
export type { NetworkClient, NetworkReads } from "./networkClient"
export {
  type Erc4337Common,
  type Erc4337Config,
  type Erc4337Settings,
  type Network,
  type NetworkConfig,
  Networks
} from "./networks"
export type { OperationOutcome, OutcomeRow } from "./outcomes"
export type { PaymasterServiceConfig } from "./paymasterService"
export {
  type GasPayer,
  liveSpendLimits,
  type SpendLimits,
  type SpendLimitsOptions,
  SpendPolicy,
  testnetSpendLimits
} from "./SpendPolicy"
export type { SafeAccount, SafeCall } from "./safeAccount"
export {
  identitySafe,
  type OperationIntent,
  type OperationStatus,
  type UserOperations,
  type UserOperationsOptions
} from "./UserOperations"
