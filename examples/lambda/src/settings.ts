// Every setting of the function, read in this one place through the core's configuration (docs/configuration.md),
// which reads the environment with Effect's Config: never `process.env` here. A bad or missing setting fails the cold
// start with an Error (ConfigurationError) naming it, what is wrong and a valid example, never a secret's value.
// On Lambda the secrets come into the environment from SSM Parameter Store or Secrets Manager (see the README).
import {
  ConfigurationError,
  clientStatusesFromEnv,
  gatewayNetworksFromEnv,
  identityProvidersFromEnv,
  issuerFromEnv,
  operatorTokenFromEnv,
  operatorTokensFromEnv,
  optionalMasterSecretFromEnv,
  redisKeyPrefixFromEnv,
  redisUrlFromEnv,
  resolverAccessFromEnv,
  signingKeysFromEnv,
  smsSenderFromEnv,
  telemetryFromEnv
} from "@walletgate/core/config"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/**
 * A setting production cannot do without: each container alone would otherwise make its own (its own wallets, its own
 * token key, its own state), which a fleet of containers cannot work with.
 */
const required =
  (name: string, expected: string) =>
  <A>(value: Option.Option<A>): Effect.Effect<A, ConfigurationError> =>
    Option.match(value, {
      onNone: () =>
        Effect.fail(
          new ConfigurationError(name, `${name} is not set (every container must share it): expected ${expected}`)
        ),
      onSome: Effect.succeed
    })

const redisUrl = () =>
  Effect.flatMap(
    redisUrlFromEnv,
    required("REDIS_URL", "the Redis every container keeps its state in, for example REDIS_URL=rediss://…:6379")
  )

/** The signing key must be set (its value is checked by `signingKeysFromEnv`). */
const signingKeyIsSet = () =>
  Config.option(Config.Redacted("WALLETGATE_SIGNING_KEY")).pipe(
    Effect.orElseSucceed(() => Option.none()),
    Effect.flatMap(
      required(
        "WALLETGATE_SIGNING_KEY",
        "an Ed25519 private key in PKCS#8 PEM, from: openssl genpkey -algorithm ed25519"
      )
    )
  )

/**
 * What a function that serves phone sign-in alone needs: the issuer, Redis, the SMS sender and the signing key. (A
 * function, as the next: a bundle of the sign-in function alone then carries none of the chain's settings.)
 */
export const signInSettings = () =>
  Effect.gen(function* () {
    const issuer = yield* issuerFromEnv
    yield* signingKeyIsSet()
    const url = yield* redisUrl()
    const keyPrefix = yield* redisKeyPrefixFromEnv
    return {
      issuer,
      /** Where the state is (`RedisConnection.layer` / `RedisStores.layer` options): the CLI uses the same two settings. */
      redis: {
        url: url.href,
        ...Option.match(keyPrefix, { onNone: () => ({}), onSome: (prefix) => ({ keyPrefix: prefix }) })
      },
      smsSender: smsSenderFromEnv,
      signingKeys: signingKeysFromEnv(issuer)
    }
  })

/** Every setting of the function that serves every route. */
export const productionSettings = () =>
  Effect.gen(function* () {
    const signIn = yield* signInSettings()
    return {
      ...signIn,
      masterSecret: yield* Effect.flatMap(
        optionalMasterSecretFromEnv,
        required("WALLETGATE_MASTER_SECRET", "at least 32 characters, from: openssl rand -base64 48")
      ),
      networks: yield* gatewayNetworksFromEnv,
      identityProviders: yield* identityProvidersFromEnv,
      operatorToken: yield* operatorTokenFromEnv,
      operatorTokens: yield* operatorTokensFromEnv,
      clientStatuses: yield* clientStatusesFromEnv,
      resolverAccess: yield* resolverAccessFromEnv,
      telemetry: yield* telemetryFromEnv
    }
  })
