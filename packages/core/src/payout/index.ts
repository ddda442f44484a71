// `@walletgate/core/payout`: payouts from automation accounts, authenticated by API keys.
export {
  type ApiKeyMode,
  ApiKeyRecord,
  ApiKeyStore,
  apiKeyFileStore,
  createApiKey,
  listApiKeys,
  makeApiKey,
  type NewApiKey,
  revokeApiKey
} from "./ApiKeys"
export {
  type AutomationAccount,
  AutomationAccounts,
  automationSafe,
  PayoutPlan,
  registerAutomationAccount
} from "./accounts"
export type {
  AccountNotFound,
  AmountPrecision,
  AssetDecimalsUnknown,
  AssetNotAToken,
  InsufficientBalance,
  InvalidApiKey,
  InvalidPayout,
  NoPayoutPlan,
  NothingToDisperse,
  PayoutError,
  PayoutNotFound,
  PlanPayoutTaken,
  UnknownNetwork
} from "./errors"
export { type PayoutPorts, payouts } from "./module"
export type { Payouts } from "./Payouts"
export {
  type AmountString,
  type AmountUnit,
  type AssetAmount,
  type AutomateStatus,
  automateStatuses,
  type DisperseRequest,
  type PayoutOperation,
  type PayoutResponse,
  type Transfer,
  type TransferRequest,
  type TxPath
} from "./schemas"
export { type PartRange, partNonceKey, type Split, splitPayout, type TransferKind } from "./split"
export { type PartStatus, type PayoutStatus, payoutStatusOf } from "./status"
