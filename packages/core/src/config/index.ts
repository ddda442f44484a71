// `@walletgate/core/config`: reading settings from the environment, the only place that does.
export {
  ConfigurationError,
  clientStatusesFromEnv,
  hostFromEnv,
  identityProvidersFromEnv,
  issuerFromEnv,
  masterSecretFromEnv,
  operatorTokenFromEnv,
  optionalMasterSecretFromEnv,
  portFromEnv,
  redisUrlFromEnv,
  resolverAccessFromEnv,
  signingKeysFromEnv,
  smsSenderFromEnv
} from "./env"
