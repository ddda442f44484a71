// `@walletgate/core/chain`: networks, their clients and settings, the chain's schemas and errors.
// The transaction pipeline (keys, Safe accounts, the bundler, the spend policy) is `@walletgate/core/operations`;
// contract bytecode and deployment are under `@walletgate/core/devnet`.

export { chainIdOfName } from "./chainNames"
export { type ChainError, ChainUnavailable, chainProblems, UnsupportedChain } from "./errors"
export type { NetworkClient, NetworkReads } from "./networkClient"
export {
  bundlerEndpoints,
  type ChainContracts,
  type Erc4337Common,
  type Erc4337Config,
  type Erc4337Settings,
  type Network,
  type NetworkConfig,
  Networks,
  type PaymasterServiceConfig
} from "./networks"
export { AddressString, HexBytes, Uint256String } from "./schemas"
export { liveSpendLimits, type SpendLimits, type SpendLimitsOptions, testnetSpendLimits } from "./spendLimits"
