// `@walletgate/core/auth`: apps, access tokens, identity providers and the signing keys of user tokens.
export {
  ACCESS_TOKEN_AUDIENCE,
  ACCESS_TOKEN_TYPE,
  AppAuth,
  type AppAuthOptions,
  type AppCredentials,
  type ClientCredentials,
  hashClientSecret,
  newClientSecret,
  registerApp,
  TEST_IDENTITY_KIND,
  type UserScope
} from "./AppAuth"
export { App, isGranted } from "./apps"
export { ClientStore } from "./ClientStore"
export { canonicalId, canonicalTestUserId, USER_ID_PATTERN } from "./canonicalIdentity"
export { type ClientStatuses, withClientStatuses } from "./clientStatuses"
export {
  AccessTokenRefused,
  type AuthError,
  authProblems,
  type ClientStatusError,
  clientStatusProblems,
  Forbidden,
  IdentityProviderUnavailable,
  InvalidAuth,
  NonCanonicalUserId,
  OAuthError,
  PermanentlyRefused,
  TokenRejected,
  UnknownIdentityProvider
} from "./errors"
export {
  CanonicalForm,
  ExternalIssuerConfig,
  type IdentityProvider,
  IdentityProviders,
  JwtAlgorithm,
  PHONE_PROVIDER,
  type PhoneIdentityOptions,
  ProviderName,
  TEL_PROVIDER
} from "./IdentityProviders"
export { type AppAuthPorts, appAuth } from "./module"
export {
  DEFAULT_OPERATOR_TOKEN_ID,
  OPERATOR_TOKEN_MIN_LENGTH,
  type OperatorToken,
  operatorCheck,
  operatorTokensOf
} from "./operator"
export { AccessTokenResponse } from "./routes"
export {
  type JsonWebKeySet,
  type SigningAlgorithm,
  SigningKeys,
  type TokenClaims,
  type TokenExpectation
} from "./SigningKeys"
export { USER_TOKEN_AUDIENCE, USER_TOKEN_TYPE } from "./tokens"
