// `@walletgate/core/auth`: apps, access tokens, identity providers and the signing keys of user tokens.
export {
  AppAuth,
  type AppAuthOptions,
  type AppCredentials,
  type ClientCredentials,
  hashClientSecret,
  registerApp,
  type UserScope
} from "./AppAuth"
export { App, isGranted } from "./apps"
export { ClientStore } from "./ClientStore"
export type { ClientStatuses } from "./clientStatuses"
export {
  type AccessTokenRefused,
  type AuthError,
  type ClientStatusError,
  type Forbidden,
  type IdentityProviderUnavailable,
  type InvalidAuth,
  type NonCanonicalUserId,
  type OAuthError,
  type PermanentlyRefused,
  type TokenRejected,
  UnknownIdentityProvider
} from "./errors"
export {
  type CanonicalForm,
  type ExternalIssuerConfig,
  type IdentityProvider,
  IdentityProviders,
  type JwtAlgorithm,
  type PhoneIdentityOptions,
  type ProviderName
} from "./IdentityProviders"
export { type AppAuthPorts, appAuth } from "./module"
export type { OperatorToken } from "./operator"
export type { AccessTokenResponse } from "./routes"
export {
  type JsonWebKeySet,
  type SigningAlgorithm,
  SigningKeys,
  type TokenClaims,
  type TokenExpectation
} from "./SigningKeys"
export { USER_TOKEN_AUDIENCE, USER_TOKEN_TYPE } from "./tokens"
