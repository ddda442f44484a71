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
export { type NewAccount, type NewApp, type NewKey, Operator } from "./Operator"
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
