// `@walletgate/core/payout`: payouts from automation accounts, authenticated by API keys.
export {
  ApiKeyMode,
  ApiKeyRecord,
  ApiKeyStore,
  apiKeyFileStore,
  createApiKey,
  hashApiKey,
  listApiKeys,
  makeApiKey,
  type NewApiKey,
  revokeApiKey
} from "./ApiKeys"
export {
  type AutomationAccount,
  AutomationAccounts,
  automationSafe,
  NATIVE_ASSET,
  PayoutPlan,
  registerAutomationAccount
} from "./accounts"
export {
  AccountNotFound,
  AmountPrecision,
  AssetDecimalsUnknown,
  AssetNotAToken,
  InsufficientBalance,
  InvalidApiKey,
  NoPayoutPlan,
  NothingToDisperse,
  type PayoutError,
  PayoutNotFound,
  PlanPayoutTaken,
  payoutProblems,
  UnknownNetwork
} from "./errors"
export { type PayoutPorts, payouts } from "./module"
export { Payouts } from "./Payouts"
export { NATIVE_DECIMALS, PLAN_PAYOUT_NONCE_KEY } from "./planning"
export {
  AmountString,
  AmountUnit,
  AssetAmount,
  AutomateStatus,
  automateStatuses,
  DisperseRequest,
  MAX_TRANSFERS,
  PayoutOperation,
  PayoutResponse,
  Transfer,
  TransferRequest,
  TxPath
} from "./schemas"
export { type PartRange, partNonceKey, type Split, splitPayout, type TransferKind } from "./split"
export { PartStatus, PayoutStatus, payoutStatusOf } from "./status"
export { toBaseUnits } from "./transfers"
