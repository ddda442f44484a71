// `@walletgate/core/config`: reading settings from the environment, the only place that does.
export {
  ConfigurationError,
  clientStatusesFromEnv,
  deployerKeyFromEnv,
  gatewayNetworksFromEnv,
  hostFromEnv,
  identityProvidersFromEnv,
  issuerFromEnv,
  masterSecretFromEnv,
  type NetworkSettingsOptions,
  networkSettingsFromEnv,
  operatorTokenFromEnv,
  optionalMasterSecretFromEnv,
  portFromEnv,
  redisUrlFromEnv,
  resolverAccessFromEnv,
  signingKeysFromEnv,
  smsSenderFromEnv
} from "./env"
export { type NetworkEntry, type NetworkSettings, NetworksFile, parseAmount } from "./networksFile"
