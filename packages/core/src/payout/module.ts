import { type AuthError, authProblems } from "../auth/errors"
import type { BatchRelay } from "../chain/BatchRelay"
import { type ChainError, chainProblems } from "../chain/errors"
import type { KeyVault } from "../chain/KeyVault"
import type { Networks } from "../chain/networks"
import { defineModule, type GatewayModule } from "../http/module"
import type { IdempotencyStore } from "../state/IdempotencyStore"
import type { TransactionLog } from "../state/TransactionLog"
import type { ApiKeyStore } from "./ApiKeys"
import type { AutomationAccounts } from "./accounts"
import { type PayoutError, payoutProblems } from "./errors"
import { Payouts } from "./Payouts"
import { payoutRoutes } from "./routes"

/** The ports payouts need (the relayer's come with the `relay` module). */
export type PayoutPorts = Networks | KeyVault | TransactionLog | IdempotencyStore | ApiKeyStore | AutomationAccounts

/**
 * The automation interface (SPEC §4.4): `POST /v1/:network/account/:address/payout/disperse` and the payout's
 * status, with `X-API-KEY`. Needs the `relay` module.
 */
export const payouts = (): GatewayModule<PayoutPorts | BatchRelay, Payouts> =>
  defineModule<Payouts, PayoutPorts | BatchRelay, PayoutError | AuthError | ChainError>({
    name: "payouts",
    needs: ["relay"],
    layer: Payouts.layer,
    routes: payoutRoutes,
    problems: { ...authProblems, ...chainProblems, ...payoutProblems }
  })
