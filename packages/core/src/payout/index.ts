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
  NATIVE_ASSET,
  PayoutPlan,
  registerAutomationAccount
} from "./accounts"
export {
  AccountNotFound,
  InsufficientBalance,
  InvalidApiKey,
  NoPayoutPlan,
  NothingToDisperse,
  type PayoutError,
  PayoutNotFound,
  payoutProblems,
  UnknownNetwork
} from "./errors"
export { type PayoutPorts, payouts } from "./module"
export { Payouts } from "./Payouts"
export { AssetAmount, DisperseRequest, MAX_TRANSFERS, PayoutResponse, Transfer } from "./schemas"
