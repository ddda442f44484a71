import * as Layer from "effect/Layer"
import { type AuthError, authProblems } from "../auth/errors"
import { type ChainError, chainProblems } from "../chain/errors"
import type { Networks } from "../chain/networks"
import { defineModule, type GatewayModule } from "../http/module"
import type { Bundler } from "../operations/Bundler"
import { type OperationError, operationProblems } from "../operations/errors"
import type { KeyVault } from "../operations/KeyVault"
import type { SpendPolicy } from "../operations/SpendPolicy"
import { UserOperations } from "../operations/UserOperations"
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
 * `pipeline` module (the spend policy).
 */
export const payouts = (): GatewayModule<PayoutPorts | SpendPolicy, Payouts> =>
  defineModule<Payouts, PayoutPorts | SpendPolicy, PayoutError | AuthError | ChainError | OperationError>({
    name: "payouts",
    needs: ["pipeline"],
    // The pipeline keeps nothing of its own (its state is in the ports), so this instance and any other agree.
    layer: Payouts.layer.pipe(Layer.provide(UserOperations.layer())),
    routes: payoutRoutes,
    problems: { ...authProblems, ...chainProblems, ...operationProblems, ...payoutProblems }
  })
