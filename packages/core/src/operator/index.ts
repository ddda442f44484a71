// `@walletgate/core/operator`: what operators do (apps, API keys, automation accounts, day budgets) and its audit log.
export {
  AUDIT_LIST_MAX,
  AUDIT_RETENTION_DEFAULT_MS,
  AuditLog,
  type AuditLogOptions,
  type AuditQuery,
  auditLimit,
  auditRetention
} from "./AuditLog"
export {
  ApiKeyNotFound,
  AppNotFound,
  InvalidOperatorInput,
  type OperatorError,
  operatorProblems
} from "./errors"
export {
  OPERATOR_REQUESTS_PER_MINUTE_DEFAULT,
  type OperatorGuardOptions,
  OperatorUnauthorized,
  operatorGuard,
  operatorGuardProblems
} from "./guard"
export { type OperatorApiPorts, operatorApi } from "./module"
export { type NewAccount, type NewApp, type NewKey, Operator } from "./Operator"
export { AccountBalanceView, NetworkView, OperationView, OperatorReads } from "./reads"
export {
  AppProvidersRequest,
  AuditQueryParams,
  BudgetsQueryParams,
  CreateAppRequest,
  CreateKeyRequest,
  OperationsQueryParams,
  operatorRoutes,
  RegisterAccountRequest,
  SetBudgetRequest
} from "./routes"
export {
  AccountView,
  type Actor,
  AppView,
  AUDIT_FIELD_MAX,
  AuditAction,
  AuditEntry,
  actorName,
  BudgetView,
  CreatedApp,
  CreatedKey,
  KeyView,
  type OperatorCall,
  RotatedSecret
} from "./schemas"
