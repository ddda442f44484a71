// `@walletgate/core/chain`: networks, owner keys, account identities, the spend policy and the chain's errors.
// Contract bytecode and deployment are under `@walletgate/core/devnet`.

export {
  Bundler,
  type BundlerEndpoint,
  type BundlerError,
  makeJsonRpcBundler,
  type UserOperation07
} from "./Bundler"
export { CHAIN_NAMES, chainIdOfName } from "./chainNames"
export {
  AccountDeploying,
  BundlerRefusedSetup,
  BundlerRejected,
  BundlerUnavailable,
  CallReverted,
  type ChainError,
  ChainUnavailable,
  chainProblems,
  GasBudgetExhausted,
  GasCeilingExceeded,
  PaymasterUnavailable,
  SponsorshipRefused,
  UnsupportedChain
} from "./errors"
export {
  AccountIdentity,
  accountSalt,
  automationIdentity,
  testUserIdentity,
  userIdOf,
  userWalletIdentity
} from "./identity"
export { deriveOwnerKey, KeyVault } from "./KeyVault"
export type { NetworkClient, NetworkReads } from "./networkClient"
export {
  bundlerEndpoints,
  type Erc4337Common,
  type Erc4337Config,
  type Erc4337Settings,
  type Network,
  type NetworkConfig,
  Networks
} from "./networks"
export { bundlerReason, type OperationOutcome, type OutcomeRow, operationOutcomes } from "./outcomes"
export { type PaymasterServiceConfig, paymasterServiceClient } from "./paymasterService"
export {
  type GasPayer,
  liveSpendLimits,
  type SpendLimits,
  type SpendLimitsOptions,
  SpendPolicy,
  testnetSpendLimits
} from "./SpendPolicy"
export { canonicalSafe4337Contracts, type SafeAccount, type SafeCall, safeProxyCreationCode } from "./safeAccount"
export { AddressString, HexBytes, Uint256String } from "./schemas"
export {
  identitySafe,
  type OperationIntent,
  type OperationStatus,
  UserOperations,
  type UserOperationsOptions
} from "./UserOperations"
