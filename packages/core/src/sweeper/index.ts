// `@walletgate/core/sweeper`: the dust-sweeping lookups (portfolio, orders, wallet info) and their ports.
export {
  BalanceReader,
  type HolderToken,
  type Holdings,
  type PairBalances,
  type TokenHolding,
  type TokenMetadata
} from "./BalanceReader"
export type { IndexSyncing, InvalidAddress, PriceUnavailable, SweeperError, SweeperNotConfigured } from "./errors"
export { type SweeperPorts, sweeper } from "./module"
export {
  byPosition,
  type EventPosition,
  type IndexBatch,
  type IndexedApproval,
  type IndexedSweep,
  type IndexedTransfer,
  OrderIndex
} from "./OrderIndex"
export { type HttpPriceOptions, PriceOracle, type Prices, type PriceTable } from "./PriceOracle"
export type { LookupError, SweeperLookups } from "./SweeperLookups"
export { OpenOrder, Order, type PastOrder, type PortfolioEntry, type TokenStatus, WalletInfo } from "./schemas"
export { type SweeperOptions, SweeperSettings, type SweeperValues } from "./settings"
export { type SupportedToken, TokenRegistry } from "./TokenRegistry"
