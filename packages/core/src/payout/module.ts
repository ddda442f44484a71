import { type AuthError, authProblems } from "../auth/errors"
import { type ChainError, chainProblems } from "../chain/errors"
import type { Networks } from "../chain/networks"
import { defineModule, type GatewayModule } from "../http/module"
import type { Bundler } from "../operations/Bundler"
import { type OperationError, operationProblems } from "../operations/errors"
import type { KeyVault } from "../operations/KeyVault"
import type { SpendPolicy } from "../operations/SpendPolicy"
import type { UserOperations } from "../operations/UserOperations"
import type { SecureRandom } from "../random/SecureRandom"
import type { AccountLocks } from "../state/AccountLocks"
import type { IdempotencyStore } from "../state/IdempotencyStore"
import type { TransactionLog } from "../state/TransactionLog"
import type { ApiKeyStore } from "./ApiKeys"
import type { AutomationAccounts } from "./accounts"
import { type PayoutError, payoutProblems } from "./errors"
import { Payouts } from "./Payouts"
import { payoutRoutes } from "./routes"

/** The ports payouts need (the spend policy comes with the `pipeline` module). */
export type PayoutPorts =
  | Networks
  | KeyVault
  | Bundler
  | AccountLocks
  | SecureRandom
  | TransactionLog
  | IdempotencyStore
  | ApiKeyStore
  | AutomationAccounts

/**
 * The automation interface (SPEC §4.4): `POST /v1/:network/account/:address/payout/disperse` and the payout's
 * status, with `X-API-KEY`; each payout one sponsored user operation through the network's bundler. Needs the
 * `pipeline` module (the pipeline and its spend policy).
 */
export const payouts = (): GatewayModule<PayoutPorts | SpendPolicy | UserOperations, Payouts> =>
  defineModule<
    Payouts,
    PayoutPorts | SpendPolicy | UserOperations,
    PayoutError | AuthError | ChainError | OperationError
  >({
    name: "payouts",
    needs: ["pipeline"],
    layer: Payouts.layer,
    routes: payoutRoutes,
    problems: { ...authProblems, ...chainProblems, ...operationProblems, ...payoutProblems }
  })
