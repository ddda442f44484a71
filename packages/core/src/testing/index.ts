// `@walletgate/core/testing`: the conformance suite every adapter runs (the table, and the checks an adapter runs on
// each of its mountings), the contract suites every port implementation runs, and the SMS outbox tests read codes from.
export {
  allConformanceCases,
  conformanceCases,
  DECLARED_OVERSIZE,
  declaredLengthCases,
  httpDetailCases
} from "./conformance/cases"
export { checkConformance, runConformance } from "./conformance/check"
export {
  CONFORMANCE_API_KEY,
  CONFORMANCE_BODY_LIMIT,
  CONFORMANCE_CLIENT,
  CONFORMANCE_COOKIES,
  COOKIES_PATH,
  type ConformanceGatewayOptions,
  makeConformanceGateway
} from "./conformance/gateway"
export {
  type ConformanceCheck,
  type ConformanceMount,
  type ConformanceTarget,
  conformanceChecks,
  type HttpMountOptions,
  httpMount,
  serveListener
} from "./conformance/suite"
export {
  type RefusedBodyOutcome,
  refusedBodyThenNext,
  responseOfFetch,
  sendOverHttp,
  sendOverSocket
} from "./conformance/transport"
export type { ConformanceCase, ConformanceRequest, ConformanceResponse } from "./conformance/types"
export { type Echo, type EchoGateway, echoGateway } from "./echoGateway"
export { accountLocksContract, expiringAccountLocksContract } from "./ports/accountLocks"
export { apiKeyStoreContract } from "./ports/apiKeyStore"
export { auditLogContract } from "./ports/auditLog"
export { automationAccountsContract } from "./ports/automationAccounts"
export { clientStoreContract } from "./ports/clientStore"
export type { PortContractCase } from "./ports/contract"
export { gasLedgerContract } from "./ports/gasLedger"
export { idempotencyStoreContract } from "./ports/idempotencyStore"
export { orderIndexContract } from "./ports/orderIndex"
export { otpStoreContract } from "./ports/otpStore"
export { rateLimiterContract } from "./ports/rateLimiter"
export { transactionLogContract } from "./ports/transactionLog"
export { userStoreContract } from "./ports/userStore"
export { type OutboxMessage, SmsOutbox } from "./SmsOutbox"
