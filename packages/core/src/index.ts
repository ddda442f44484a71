// `@walletgate/core`: the gateway, its modules, the ports they need with their layers, the errors a port
// implementation raises or a caller sees, and the schemas of the records a port stores. Each domain's full
// surface is its own subpath (`@walletgate/core/otp`, `/auth`, `/kernel`, `/payout`, `/sweeper`, `/state`,
// `/chain`); adapters use `/adapter`; the local chain is `/devnet`; test aids are `/testing`.

export type { AppAuthOptions } from "./auth/AppAuth"
export { App } from "./auth/apps"
export { ClientStore } from "./auth/ClientStore"
export type { AuthError } from "./auth/errors"
export { type ExternalIssuerConfig, IdentityProviders } from "./auth/IdentityProviders"
export { appAuth } from "./auth/module"
export { PhoneE164 } from "./auth/phone"
export { SigningKeys } from "./auth/SigningKeys"
export type { ChainError } from "./chain/errors"
export { type NetworkConfig, Networks } from "./chain/networks"
export { type ComposeOptions, composeGateway } from "./compose"
export type { FetchOptions, Gateway, GatewayRequest, GatewayResponse } from "./http/contract"
export type { TransportError } from "./http/errors"
export { defineModule, type GatewayModule, type PortsOf } from "./http/module"
export type { ProblemDocument } from "./http/problem"
export type { KernelError } from "./kernel/errors"
export type { KernelOptions } from "./kernel/Kernel"
export { type KernelTxOptions, kernelTx, pipeline } from "./kernel/module"
export { Bundler } from "./operations/Bundler"
export type { OperationError } from "./operations/errors"
export { KeyVault } from "./operations/KeyVault"
export { SpendPolicy } from "./operations/SpendPolicy"
export { operatorApi } from "./operator/module"
export type { OtpError } from "./otp/errors"
export { type EmbeddedSignInOptions, embeddedSignInPorts, phoneSignIn } from "./otp/module"
export { OtpStore } from "./otp/OtpStore"
export { OtpPolicy, type OtpPolicyOptions } from "./otp/policy"
export { SmsSender } from "./otp/SmsSender"
export { User, UserId, UserStore } from "./otp/UserStore"
export { ApiKeyStore } from "./payout/ApiKeys"
export { AutomationAccounts } from "./payout/accounts"
export type { PayoutError } from "./payout/errors"
export { payouts } from "./payout/module"
export { SecureRandom } from "./random/SecureRandom"
export { AccountLocks } from "./state/AccountLocks"
export { type RateLimited, type StateError, StoreUnavailable } from "./state/errors"
export { GasLedger } from "./state/GasLedger"
export type { IdempotencyError } from "./state/IdempotencyStore"
export { IdempotencyStore } from "./state/IdempotencyStore"
export { RateLimiter } from "./state/RateLimiter"
export { TransactionLog } from "./state/TransactionLog"
export { BalanceReader } from "./sweeper/BalanceReader"
export type { SweeperError } from "./sweeper/errors"
export { sweeper } from "./sweeper/module"
export { OrderIndex } from "./sweeper/OrderIndex"
export { PriceOracle } from "./sweeper/PriceOracle"
export { type SweeperOptions, SweeperSettings } from "./sweeper/settings"
export { TokenRegistry } from "./sweeper/TokenRegistry"
export {
  type EmbeddedOptions,
  embeddedPorts,
  type GatewayPorts,
  type MakeGatewayOptions,
  makeGateway,
  standardModules
} from "./walletgate"
