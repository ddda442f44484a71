import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { AppAuth } from "../auth/AppAuth"
import { type ClientStatuses, withClientStatuses } from "../auth/clientStatuses"
import { type AuthError, authProblems, type ClientStatusError, clientStatusProblems } from "../auth/errors"
import type { IdentityProviders } from "../auth/IdentityProviders"
import { type ChainError, chainProblems } from "../chain/errors"
import { Networks } from "../chain/networks"
import { defineModule, type GatewayModule } from "../http/module"
import type { RouteErrors, RouteServices } from "../http/route"
import type { Bundler } from "../operations/Bundler"
import { type OperationError, operationProblems } from "../operations/errors"
import type { KeyVault } from "../operations/KeyVault"
import { pipelineHealth, pipelineHealthy } from "../operations/pipelineHealth"
import { SpendPolicy } from "../operations/SpendPolicy"
import { UserOperations, type UserOperationsOptions } from "../operations/UserOperations"
import type { SecureRandom } from "../random/SecureRandom"
import type { AccountLocks } from "../state/AccountLocks"
import type { GasLedger } from "../state/GasLedger"
import type { IdempotencyStore } from "../state/IdempotencyStore"
import type { RateLimiter } from "../state/RateLimiter"
import type { TransactionLog } from "../state/TransactionLog"
import { type KernelError, kernelProblems } from "./errors"
import { DEFAULT_MAX_CALLS, Kernel, type KernelOptions } from "./Kernel"
import { type ResolverOptions, resolverRoute } from "./resolver"
import { kernelRoutes } from "./routes"
import { signRoute } from "./sign"

/** The ports the pipeline module needs. */
export type PipelinePorts = Networks | Bundler | GasLedger | KeyVault | TransactionLog | AccountLocks | SecureRandom

/** Options of {@link pipeline}. */
export interface PipelineOptions {
  /** The pipeline's settings (the deploy lock's bound). */
  readonly operations?: UserOperationsOptions
}

/**
 * The ERC-4337 pipeline the wallet and payout modules share (both list `pipeline` in `needs`), built once: the
 * pipeline itself (`UserOperations`) and the spend policy it applies; each network's bundler (does it serve the
 * EntryPoint?) and paymaster deposit (is it low?) in `GET /v1/health`; and, for the operator, the policy's limits and
 * use.
 */
export const pipeline = (options: PipelineOptions = {}): GatewayModule<PipelinePorts, SpendPolicy | UserOperations> =>
  defineModule<SpendPolicy | UserOperations, PipelinePorts, ChainError | OperationError>({
    name: "pipeline",
    layer: UserOperations.layer(options.operations).pipe(Layer.provideMerge(SpendPolicy.layer)),
    routes: [],
    problems: { ...chainProblems, ...operationProblems },
    health: Effect.gen(function* () {
      const networks = yield* Networks
      const pipelines = yield* Effect.forEach(networks.all, pipelineHealth, { concurrency: "unbounded" })
      return { healthy: pipelines.every(pipelineHealthy), detail: { networks: pipelines } }
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

/** The ports the wallet transactions need (the pipeline and app authentication come with those modules). */
export type KernelTxPorts =
  | Networks
  | KeyVault
  | TransactionLog
  | IdempotencyStore
  | IdentityProviders
  | Bundler
  | AccountLocks
  | SecureRandom
  | RateLimiter

type KernelRoute = ReturnType<typeof kernelRoutes>[number] | ReturnType<typeof resolverRoute> | typeof signRoute

/** Options of {@link kernelTx}: the batch limits, the statuses of refusals and the ERC-4337 pipeline's settings. */
export interface KernelTxOptions extends KernelOptions {
  /** `patch` for clients written for Paymagic's Patch Wallet API (see `ClientStatuses`); default `standard`. */
  readonly clientStatuses?: ClientStatuses
  /** Who may resolve user ids to wallet addresses (`POST /v1/resolver`); default: apps, 60 a minute each. */
  readonly resolver?: ResolverOptions
}

/**
 * Wallet transactions (SPEC §4.3): `POST /v1/kernel/tx`, `GET /v1/kernel/tx/:id` and `POST /v1/resolver`, on the ERC-4337 pipeline
 * (`UserOperations`). Needs the `appAuth` module, and `pipeline`, which it shares with the payouts.
 */
export const kernelTx = (
  options: KernelTxOptions = {}
): GatewayModule<KernelTxPorts | AppAuth | UserOperations, Kernel> =>
  defineModule<
    Kernel,
    KernelTxPorts | AppAuth | UserOperations,
    KernelError | AuthError | ChainError | OperationError | ClientStatusError
  >({
    name: "kernelTx",
    needs: ["appAuth", "pipeline"],
    layer: Kernel.layer(),
    routes: withClientStatuses<RouteServices<KernelRoute>, RouteErrors<KernelRoute>>(
      options.clientStatuses ?? "standard",
      [...kernelRoutes(options.maxCalls ?? DEFAULT_MAX_CALLS), signRoute, resolverRoute(options.resolver)]
    ),
    problems: { ...authProblems, ...clientStatusProblems, ...chainProblems, ...operationProblems, ...kernelProblems }
  })
