// `@walletgate/core/operator`: what operators do (apps, API keys, automation accounts, day budgets) and its audit log.
export { AUDIT_RETENTION_DEFAULT_MS, AuditLog, type AuditLogOptions, type AuditQuery, auditLimit } from "./AuditLog"
export type { ApiKeyNotFound, AppNotFound, InvalidOperatorInput, OperatorError } from "./errors"
export type { OperatorGuardOptions, OperatorUnauthorized } from "./guard"
export { type OperatorApiPorts, operatorApi } from "./module"
export { type NewAccount, type NewApp, type NewKey, Operator } from "./Operator"
export type { AccountBalanceView, NetworkView, OperationView, OperatorReads } from "./reads"
export type {
  AppProvidersRequest,
  AuditQueryParams,
  BudgetsQueryParams,
  CreateAppRequest,
  CreateKeyRequest,
  OperationsQueryParams,
  RegisterAccountRequest,
  SetBudgetRequest
} from "./routes"
export {
  type AccountView,
  type Actor,
  type AppView,
  type AuditAction,
  AuditEntry,
  type BudgetView,
  type CreatedApp,
  type CreatedKey,
  type KeyView,
  type OperatorCall,
  type RotatedSecret
} from "./schemas"
