import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Logger from "effect/Logger"
import type { AppAuthOptions } from "./auth/AppAuth"
import { type App, unregisteredGrants } from "./auth/apps"
import { ClientStore } from "./auth/ClientStore"
import { type ExternalIssuerConfig, IdentityProviders } from "./auth/IdentityProviders"
import { appAuth } from "./auth/module"
import { type OperatorToken, operatorTokensOf } from "./auth/operator"
import type { SigningKeys } from "./auth/SigningKeys"
import { bundlerEndpoints, type NetworkConfig, Networks } from "./chain/networks"
import { composeGateway } from "./compose"
import type { ConfigurationError } from "./config/read"
import type { Gateway } from "./http/contract"
import type { Telemetry } from "./internal/telemetry"
import { type KernelTxOptions, kernelTx, type PipelineOptions, pipeline } from "./kernel/module"
import { Bundler, makeJsonRpcBundler } from "./operations/Bundler"
import { KeyVault } from "./operations/KeyVault"
import { AuditLog } from "./operator/AuditLog"
import { operatorApi } from "./operator/module"
import { type EmbeddedSignInOptions, embeddedSignInPorts, phoneSignIn } from "./otp/module"
import type { OtpStore } from "./otp/OtpStore"
import type { OtpPolicy } from "./otp/policy"
import type { SmsSender } from "./otp/SmsSender"
import type { UserStore } from "./otp/UserStore"
import { type ApiKeyRecord, ApiKeyStore } from "./payout/ApiKeys"
import { type AutomationAccount, AutomationAccounts } from "./payout/accounts"
import { payouts } from "./payout/module"
import { SecureRandom } from "./random/SecureRandom"
import { AccountLocks } from "./state/AccountLocks"
import { GasLedger } from "./state/GasLedger"
import { IdempotencyStore } from "./state/IdempotencyStore"
import type { RateLimiter } from "./state/RateLimiter"
import { TransactionLog } from "./state/TransactionLog"
import { BalanceReader } from "./sweeper/BalanceReader"
import { sweeper } from "./sweeper/module"
import { OrderIndex } from "./sweeper/OrderIndex"
import { PriceOracle } from "./sweeper/PriceOracle"
import { type SweeperOptions, SweeperSettings } from "./sweeper/settings"
import { TokenRegistry } from "./sweeper/TokenRegistry"

/** Every port a gateway needs; provide them all in `makeGateway({ ports })`. */
export type GatewayPorts =
  | OtpPolicy
  | OtpStore
  | SmsSender
  | RateLimiter
  | UserStore
  | SigningKeys
  | SecureRandom
  | ClientStore
  | IdentityProviders
  | Networks
  | Bundler
  | KeyVault
  | TransactionLog
  | AccountLocks
  | IdempotencyStore
  | ApiKeyStore
  | AutomationAccounts
  | GasLedger
  | SweeperSettings
  | TokenRegistry
  | BalanceReader
  | PriceOracle
  | OrderIndex
  | AuditLog

/** Options of {@link embeddedPorts}. */
export interface EmbeddedOptions extends EmbeddedSignInOptions {
  /**
   * The external identity providers of the deployment (`IdentityProviders.layer`): one verifier per name;
   * the native phone sign-in is always there as `phone`. A reserved or repeated name throws at once.
   */
  readonly identityProviders?: ReadonlyArray<ExternalIssuerConfig>
  /** Registered apps (see `registerApp` to make credentials); each may only be granted registered providers. */
  readonly apps?: ReadonlyArray<App>
  /** The networks served; none by default (every chain is then `unsupported_chain`). */
  readonly networks?: ReadonlyArray<NetworkConfig>
  /**
   * The master secret wallet owner keys are derived from (`KeyVault.derived`), at least 32 bytes. Without
   * it a random one is made at start: every wallet then changes on restart, which is only fit for tests.
   */
  readonly masterSecret?: string
  /** API keys of the automation interface (records; see `createApiKey`). */
  readonly apiKeys?: ReadonlyArray<ApiKeyRecord>
  /** Automation accounts and their payout plans (see `registerAutomationAccount`). */
  readonly automationAccounts?: ReadonlyArray<AutomationAccount>
  /** The dust-sweeping lookups: their network, supported tokens and prices; without it they answer 404. */
  readonly sweeper?: SweeperOptions
}

const ephemeralVault = Layer.unwrap(
  Effect.gen(function* () {
    const random = yield* SecureRandom
    const secret = Buffer.from(yield* random.bytes(32)).toString("hex")
    yield* Effect.logWarning("walletgate: using an ephemeral wallet master secret; wallets change on restart")
    return KeyVault.derived(secret)
  })
).pipe(Layer.provide(SecureRandom.crypto))

/** The networks, and the ERC-7769 bundler each of them names (`erc4337.bundlerUrl`). */
const networksAndBundlers = (configs: ReadonlyArray<NetworkConfig>): Layer.Layer<Networks | Bundler> =>
  Layer.effect(
    Bundler,
    Effect.map(Effect.service(Networks), (networks) => makeJsonRpcBundler(bundlerEndpoints(networks.all)))
  ).pipe(Layer.provideMerge(Networks.layer(configs)))

/**
 * The embedded defaults: in-memory state, the console SMS outbox, an ephemeral signing key and the
 * platform CSPRNG. Right for development, tests and a single process; override ports for production,
 * e.g. `Layer.mergeAll(embeddedPorts(), SmsSender.twilio(config))` (a later layer wins).
 */
export const embeddedPorts = (options: EmbeddedOptions = {}): Layer.Layer<GatewayPorts> => {
  // `tel:` ids name the numbers this sign-in accepts: its regions and its test numbers.
  const identityProviders = IdentityProviders.make(options.identityProviders, {
    ...(options.otp?.regions === undefined ? {} : { regions: options.otp.regions }),
    testPhones: Object.keys(options.otp?.testPhones ?? {})
  })
  for (const app of options.apps ?? []) {
    const unknown = unregisteredGrants(identityProviders, app.providers)
    if (unknown.length > 0) {
      throw new RangeError(`apps: ${app.clientId} is granted unregistered identity providers: ${unknown.join(", ")}`)
    }
  }
  return Layer.mergeAll(
    embeddedSignInPorts(options),
    ClientStore.memory(options.apps),
    Layer.succeed(IdentityProviders, identityProviders),
    networksAndBundlers(options.networks ?? []),
    options.masterSecret === undefined ? ephemeralVault : KeyVault.derived(options.masterSecret),
    TransactionLog.memory,
    AccountLocks.memory,
    IdempotencyStore.memory,
    ApiKeyStore.memory(options.apiKeys),
    AutomationAccounts.memory(options.automationAccounts),
    GasLedger.memory,
    SweeperSettings.layer(options.sweeper),
    TokenRegistry.layer(options.sweeper === undefined ? {} : { [options.sweeper.network]: options.sweeper.tokens }),
    PriceOracle.static(options.sweeper?.prices),
    BalanceReader.multicall,
    OrderIndex.memory,
    AuditLog.memory()
  )
}

/** Options of {@link makeGateway}. */
export interface MakeGatewayOptions<E> {
  /** The ports; default {@link embeddedPorts}. */
  readonly ports?: Layer.Layer<GatewayPorts, E>
  /** Largest request body in bytes; default 100 KiB. */
  readonly bodyLimit?: number
  /** The path the gateway answers below (`"/wallet"`); see `ComposeOptions.basePath`. */
  readonly basePath?: string
  /** Where log lines go; default Effect's console logger. Log lines never hold codes, tokens or keys. */
  readonly loggers?: ReadonlyArray<Logger.Logger<unknown, unknown>>
  /** Access-token lifetime and external JWKS timeout. */
  readonly apps?: AppAuthOptions
  /** Batch limits, and the statuses of refusals (`clientStatuses: "patch"` for Patch Wallet clients). */
  readonly kernel?: KernelTxOptions
  /** The ERC-4337 pipeline's settings (the deploy lock's bound), shared by wallet batches and payouts. */
  readonly pipeline?: PipelineOptions
  /**
   * The operator token (at least 32 characters): `Authorization: Bearer <token>` on `GET /v1/health` adds the
   * spend policy's limits and use per network. Without it, nobody sees that detail.
   */
  readonly operatorToken?: string
  /**
   * Operator tokens with ids (`WALLETGATE_OPERATOR_TOKENS`), beside `operatorToken` (id `default`), each at least 32
   * characters: with one or more, the operator API is served under `/v1/operator/` (without any, it is not).
   */
  readonly operatorTokens?: ReadonlyArray<OperatorToken>
  /** Requests to the operator API per client address per minute; default 60. */
  readonly operatorRequestsPerMinute?: number
  /** Where spans, metrics and logs are exported (`otlpTelemetry(settings)`); see `ComposeOptions.telemetry`. */
  readonly telemetry?: Layer.Layer<Telemetry, ConfigurationError> | undefined
}

/**
 * Every module walletgate has, as {@link makeGateway} serves them: the operator API only when an operator token is
 * configured (it is never served without one).
 */
export const standardModules = (
  options: Pick<
    MakeGatewayOptions<never>,
    "apps" | "kernel" | "pipeline" | "operatorToken" | "operatorTokens" | "operatorRequestsPerMinute"
  > = {}
) => {
  const tokens = operatorTokensOf(options)
  const modules = [
    phoneSignIn(),
    appAuth(options.apps),
    pipeline(options.pipeline),
    kernelTx(options.kernel),
    payouts(),
    sweeper()
  ] as const
  return tokens.length === 0
    ? modules
    : ([
        ...modules,
        operatorApi({
          tokens,
          ...(options.operatorRequestsPerMinute === undefined
            ? {}
            : { requestsPerMinute: options.operatorRequestsPerMinute })
        })
      ] as const)
}

/**
 * Builds a walletgate with every module: phone sign-in, app auth, wallet transactions, payouts and the
 * dust-sweeping lookups, on the embedded defaults unless `ports` says otherwise. To serve fewer (a
 * sign-in-only function, say), compose them with `composeGateway`.
 */
export const makeGateway = <E = never>(options: MakeGatewayOptions<E> = {}): Gateway =>
  composeGateway({
    modules: standardModules(options),
    ports: options.ports ?? embeddedPorts(),
    ...(options.bodyLimit === undefined ? {} : { bodyLimit: options.bodyLimit }),
    ...(options.basePath === undefined ? {} : { basePath: options.basePath }),
    ...(options.loggers === undefined ? {} : { loggers: options.loggers }),
    ...(options.operatorToken === undefined ? {} : { operatorToken: options.operatorToken }),
    ...(options.operatorTokens === undefined ? {} : { operatorTokens: options.operatorTokens }),
    ...(options.telemetry === undefined ? {} : { telemetry: options.telemetry })
  })
