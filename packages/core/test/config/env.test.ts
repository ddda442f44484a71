import { embeddedPorts, makeGateway } from "@walletgate/core"
import {
  ConfigurationError,
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
  signingKeysFromEnv,
  smsSenderFromEnv
} from "@walletgate/core/config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { describe, expect, it } from "vitest"

/** What reading `effect` in the environment `env` fails with (its rejection, as a host sees it). */
const failureOf = async <A, E>(effect: Effect.Effect<A, E>, env: Record<string, string>): Promise<unknown> =>
  Effect.runPromise(Effect.provideService(effect, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))).then(
    () => undefined,
    (error: unknown) => error
  )

/** What building `layer`'s gateway fails with at start (`gateway.ready()`), in the environment `env`. */
const startFailure = async (layer: Layer.Layer<never, unknown>, env: Record<string, string>): Promise<unknown> => {
  const gateway = makeGateway({
    ports: Layer.mergeAll(embeddedPorts(), layer).pipe(
      Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env })))
    ),
    loggers: []
  })
  try {
    await gateway.ready()
    return undefined
  } catch (error) {
    return error
  } finally {
    await gateway.dispose()
  }
}

const SECRET = "s3cr3t-value-that-must-never-be-printed-0123456789"

/** An Error naming `setting`, with an example of it, and without `secret`. */
const expectExplained = (error: unknown, setting: string, what: RegExp, secret?: string) => {
  expect(error).toBeInstanceOf(Error)
  expect(error).toBeInstanceOf(ConfigurationError)
  const { message } = error as ConfigurationError
  expect((error as ConfigurationError).setting).toBe(setting)
  expect(message).toMatch(new RegExp(`^${setting} `))
  expect(message).toMatch(what)
  expect(message).toContain(`for example ${setting}=`)
  if (secret !== undefined) expect(`${message}${(error as Error).stack}`).not.toContain(secret)
}

describe("configuration errors", () => {
  it("WALLETGATE_SMS=twilio without TWILIO_*: an Error naming TWILIO_ACCOUNT_SID, at the gateway's start", async () => {
    const error = await startFailure(smsSenderFromEnv, { WALLETGATE_SMS: "twilio" })
    expectExplained(error, "TWILIO_ACCOUNT_SID", /is not set \(WALLETGATE_SMS=twilio needs it\)/)
  })

  it("a missing auth token is named; an empty one too, and its value is never shown", async () => {
    expectExplained(
      await startFailure(smsSenderFromEnv, { WALLETGATE_SMS: "twilio", TWILIO_ACCOUNT_SID: "AC1", TWILIO_FROM: "+1" }),
      "TWILIO_AUTH_TOKEN",
      /is not set/
    )
    const webhook = await startFailure(smsSenderFromEnv, {
      WALLETGATE_SMS: "webhook",
      WALLETGATE_SMS_WEBHOOK_URL: `not a url ${SECRET}`
    })
    expectExplained(webhook, "WALLETGATE_SMS_WEBHOOK_URL", /is invalid/)
  })

  it("an unknown WALLETGATE_SMS says which values there are", async () => {
    expectExplained(
      await startFailure(smsSenderFromEnv, { WALLETGATE_SMS: "carrier-pigeon" }),
      "WALLETGATE_SMS",
      /console, twilio or webhook/
    )
  })

  it("a malformed WALLETGATE_SIGNING_KEY is named, the key never shown", async () => {
    const pem = `-----BEGIN PRIVATE KEY-----\n${SECRET}\n-----END PRIVATE KEY-----`
    const error = await startFailure(signingKeysFromEnv("walletgate"), { WALLETGATE_SIGNING_KEY: pem })
    expectExplained(error, "WALLETGATE_SIGNING_KEY", /not an Ed25519 private key in PKCS#8 PEM/, SECRET)
  })

  it("secrets too short are named without their value; other settings show what was read", async () => {
    expectExplained(
      await failureOf(masterSecretFromEnv("x".repeat(32)), { WALLETGATE_MASTER_SECRET: "short-secret" }),
      "WALLETGATE_MASTER_SECRET",
      /is invalid: expected at least 32/,
      "short-secret"
    )
    expectExplained(
      await failureOf(optionalMasterSecretFromEnv, { WALLETGATE_MASTER_SECRET: "short-secret" }),
      "WALLETGATE_MASTER_SECRET",
      /is invalid/,
      "short-secret"
    )
    expectExplained(
      await failureOf(operatorTokenFromEnv, { WALLETGATE_OPERATOR_TOKEN: "tiny-token" }),
      "WALLETGATE_OPERATOR_TOKEN",
      /is invalid/,
      "tiny-token"
    )
    expectExplained(
      await failureOf(operatorTokensFromEnv, {
        WALLETGATE_OPERATOR_TOKENS: `ops-a:${"a".repeat(32)},ops-b:tiny-token`
      }),
      "WALLETGATE_OPERATOR_TOKENS",
      /is invalid/,
      "tiny-token"
    )
    expectExplained(
      await failureOf(portFromEnv, { PORT: "70000" }),
      "PORT",
      /is invalid \("70000": Expected a value between 0 and 65535\)/
    )
    expectExplained(await failureOf(redisUrlFromEnv, { REDIS_URL: "not a url" }), "REDIS_URL", /is invalid/)
    // A prefix with a brace would choose the cluster slot: the stores refuse it, and so does the setting.
    expectExplained(
      await failureOf(redisKeyPrefixFromEnv, { WALLETGATE_REDIS_KEY_PREFIX: "app{1}:" }),
      "WALLETGATE_REDIS_KEY_PREFIX",
      /is invalid \("app\{1\}:": Expected 1 to 64 characters, no \{ \} or space\)/
    )
    expectExplained(
      await failureOf(identityProvidersFromEnv, { WALLETGATE_IDENTITY_PROVIDERS: "[{}]" }),
      "WALLETGATE_IDENTITY_PROVIDERS",
      /is invalid/
    )
  })

  it("reads the defaults when nothing is set", async () => {
    const read = Effect.all({
      port: portFromEnv,
      host: hostFromEnv,
      issuer: issuerFromEnv,
      providers: identityProvidersFromEnv
    })
    const settings = await Effect.runPromise(
      Effect.provideService(read, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} }))
    )
    expect(settings).toEqual({ port: 3000, host: "127.0.0.1", issuer: "walletgate", providers: [] })
    expect(await startFailure(Layer.mergeAll(smsSenderFromEnv, signingKeysFromEnv("walletgate")), {})).toBeUndefined()
  })
})

describe("WALLETGATE_OPERATOR_TOKENS", () => {
  const read = (env: Record<string, string>) =>
    Effect.runPromise(
      Effect.provideService(operatorTokensFromEnv, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))
    ).then(Redacted.value)

  it("reads id:token pairs, none when unset, and never shows them when the list is printed", async () => {
    const first = "0123456789abcdef0123456789abcdef"
    const second = "fedcba9876543210fedcba9876543210:with-colon"
    expect(await read({})).toEqual([])
    expect(await read({ WALLETGATE_OPERATOR_TOKENS: `ops-2026a:${first}, ops-2026b:${second}` })).toEqual([
      { id: "ops-2026a", token: first },
      { id: "ops-2026b", token: second }
    ])
    const redacted = await Effect.runPromise(
      Effect.provideService(
        operatorTokensFromEnv,
        ConfigProvider.ConfigProvider,
        ConfigProvider.fromEnv({ env: { WALLETGATE_OPERATOR_TOKENS: `a:${first}` } })
      )
    )
    expect(String(redacted)).not.toContain(first)
  })
})
