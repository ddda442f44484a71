import * as Layer from "effect/Layer"
import type { ClientStore } from "../auth/ClientStore"
import type { IdentityProviders } from "../auth/IdentityProviders"
import { type ChainError, chainProblems } from "../chain/errors"
import type { Networks } from "../chain/networks"
import { defineModule, type GatewayModule } from "../http/module"
import type { Bundler } from "../operations/Bundler"
import { type OperationError, operationProblems } from "../operations/errors"
import type { KeyVault } from "../operations/KeyVault"
import type { SpendPolicy } from "../operations/SpendPolicy"
import { UserOperations } from "../operations/UserOperations"
import type { ApiKeyStore } from "../payout/ApiKeys"
import type { AutomationAccounts } from "../payout/accounts"
import type { SecureRandom } from "../random/SecureRandom"
import type { AccountLocks } from "../state/AccountLocks"
import type { RateLimiter } from "../state/RateLimiter"
import type { TransactionLog } from "../state/TransactionLog"
import type { AuditLog } from "./AuditLog"
import { consoleRoutes } from "./console/routes"
import { type OperatorError, operatorProblems } from "./errors"
import { type OperatorGuardOptions, type OperatorUnauthorized, operatorGuard, operatorGuardProblems } from "./guard"
import { Operator } from "./Operator"
import { OperatorReads } from "./reads"
import { operatorRoutes } from "./routes"

/** The ports the operator API needs (the spend policy comes with the `pipeline` module). */
export type OperatorApiPorts =
  | ClientStore
  | ApiKeyStore
  | AutomationAccounts
  | AuditLog
  | IdentityProviders
  | Networks
  | KeyVault
  | SecureRandom
  | RateLimiter
  | TransactionLog
  | Bundler
  | AccountLocks

/**
 * The operator API under `/v1/operator/`: the operator module's changes (apps, API keys, automation accounts, day
 * budgets, each appended to the audit log as `api:<token id>@<client address>`) and reads (the audit log, recent
 * user operations, each network's pipeline), for the bearer of an operator token (`tokens`: at least one, each of 32
 * characters or more; throws otherwise), rate-limited per client address; and the operator console over it at
 * `/operator` (a page that asks for the token itself). Needs the `pipeline` module.
 */
export const operatorApi = (
  options: OperatorGuardOptions
): GatewayModule<OperatorApiPorts | SpendPolicy, Operator | OperatorReads> =>
  defineModule<
    Operator | OperatorReads,
    OperatorApiPorts | SpendPolicy,
    OperatorError | ChainError | OperationError | OperatorUnauthorized
  >({
    name: "operatorApi",
    needs: ["pipeline"],
    layer: Layer.merge(Operator.layer, OperatorReads.layer.pipe(Layer.provide(UserOperations.layer()))),
    routes: [...operatorRoutes(operatorGuard(options)), ...consoleRoutes],
    problems: { ...chainProblems, ...operationProblems, ...operatorProblems, ...operatorGuardProblems }
  })
