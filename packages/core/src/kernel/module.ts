import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { AppAuth } from "../auth/AppAuth"
import { type ClientStatuses, withClientStatuses } from "../auth/clientStatuses"
import { type AuthError, authProblems, type ClientStatusError, clientStatusProblems } from "../auth/errors"
import type { IdentityProviders } from "../auth/IdentityProviders"
import { BatchRelay, type BatchRelayOptions } from "../chain/BatchRelay"
import { type ChainError, chainProblems } from "../chain/errors"
import type { KeyVault } from "../chain/KeyVault"
import { Networks, relayerBalance } from "../chain/networks"
import { SpendPolicy } from "../chain/SpendPolicy"
import { defineModule, type GatewayModule } from "../http/module"
import type { RouteErrors, RouteServices } from "../http/route"
import type { SecureRandom } from "../random/SecureRandom"
import type { AccountLocks } from "../state/AccountLocks"
import type { GasLedger } from "../state/GasLedger"
import type { IdempotencyStore } from "../state/IdempotencyStore"
import type { TransactionLog } from "../state/TransactionLog"
import { type KernelError, kernelProblems } from "./errors"
import { Kernel, type KernelOptions } from "./Kernel"
import { kernelRoutes } from "./routes"

/** The ports the relayer needs. */
export type RelayPorts = Networks | AccountLocks | TransactionLog | SecureRandom | GasLedger

/**
 * The relayer that runs batches for the wallet and payout modules (both list `relay` in `needs`, so they share
 * one) within the spend policy, its balances in `GET /v1/health`, and the policy's limits and use for the operator.
 */
export const relay = (options: BatchRelayOptions = {}): GatewayModule<RelayPorts, BatchRelay | SpendPolicy> =>
  defineModule<BatchRelay | SpendPolicy, RelayPorts, ChainError>({
    name: "relay",
    layer: BatchRelay.layer(options).pipe(Layer.provideMerge(SpendPolicy.layer)),
    routes: [],
    problems: chainProblems,
    health: Effect.gen(function* () {
      const networks = yield* Networks
      const relayers = yield* Effect.forEach(
        networks.all,
        (network) =>
          relayerBalance(network).pipe(
            Effect.map(({ balance, low }) => ({
              network: network.slug,
              relayer: network.relayer.account.address,
              balanceWei: String(balance),
              low,
              reachable: true
            })),
            Effect.orElseSucceed(() => ({
              network: network.slug,
              relayer: network.relayer.account.address,
              balanceWei: null,
              low: null,
              reachable: false
            }))
          ),
        { concurrency: "unbounded" }
      )
      return { healthy: relayers.every((one) => one.reachable && one.low === false), detail: { relayers } }
    }),
    operatorHealth: Effect.gen(function* () {
      const networks = yield* Networks
      const policy = yield* SpendPolicy
      const spend = yield* Effect.forEach(
        networks.all,
        (network) =>
          policy.use(network).pipe(Effect.orElseSucceed(() => ({ network: network.slug, unavailable: true }))),
        { concurrency: "unbounded" }
      )
      return { spend }
    })
  })

/** The ports the wallet transactions need (the relayer's and app authentication's come with those modules). */
export type KernelTxPorts = Networks | KeyVault | TransactionLog | IdempotencyStore | IdentityProviders

type KernelRoute = (typeof kernelRoutes)[number]

/** Options of {@link kernelTx}: the batch limits, and the statuses of refusals. */
export interface KernelTxOptions extends KernelOptions {
  /** `patch` for clients written for Paymagic's Patch Wallet API (see `ClientStatuses`); default `standard`. */
  readonly clientStatuses?: ClientStatuses
}

/**
 * Wallet transactions (SPEC §4.3): `POST /v1/kernel/tx` and `GET /v1/kernel/tx/:id`. Needs the `appAuth` and
 * `relay` modules.
 */
export const kernelTx = (options: KernelTxOptions = {}): GatewayModule<KernelTxPorts | AppAuth | BatchRelay, Kernel> =>
  defineModule<Kernel, KernelTxPorts | AppAuth | BatchRelay, KernelError | AuthError | ChainError | ClientStatusError>({
    name: "kernelTx",
    needs: ["appAuth", "relay"],
    layer: Kernel.layer(options),
    routes: withClientStatuses<RouteServices<KernelRoute>, RouteErrors<KernelRoute>>(
      options.clientStatuses ?? "standard",
      kernelRoutes
    ),
    problems: { ...authProblems, ...clientStatusProblems, ...chainProblems, ...kernelProblems }
  })
