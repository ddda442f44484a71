// `@walletgate/core/config`: reading settings from the environment, the only place that does.
export {
  clientStatusesFromEnv,
  hostFromEnv,
  identityProvidersFromEnv,
  issuerFromEnv,
  masterSecretFromEnv,
  operatorTokenFromEnv,
  operatorTokensFromEnv,
  optionalMasterSecretFromEnv,
  portFromEnv,
  redisKeyPrefixFromEnv,
  redisUrlFromEnv,
  resolverAccessFromEnv,
  signingKeysFromEnv,
  smsSenderFromEnv
} from "./env"
export { gatewayNetworksFromEnv, type NetworkSettingsOptions, networkSettingsFromEnv } from "./networksEnv"
export type { NetworkEntry, NetworkSettings, NetworksFile } from "./networksFile"
export { ConfigurationError } from "./read"
export { telemetryFromEnv } from "./telemetry"
