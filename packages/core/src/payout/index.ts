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
export { Payouts, PLAN_PAYOUT_NONCE_KEY } from "./Payouts"
export { AssetAmount, DisperseRequest, MAX_TRANSFERS, PayoutResponse, Transfer } from "./schemas"
