// `@walletgate/core/config`: reading settings from the environment, the only place that does.
export {
  clientStatusesFromEnv,
  hostFromEnv,
  identityProvidersFromEnv,
  masterSecretFromEnv,
  operatorTokenFromEnv,
  portFromEnv,
  smsSenderFromEnv
} from "./env"
