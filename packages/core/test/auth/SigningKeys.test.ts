import { generateKeyPairSync } from "node:crypto"
import { type Gateway, SigningKeys } from "@walletgate/core"
import { composeGateway } from "@walletgate/core/compose"
import { signingKeysFromEnv } from "@walletgate/core/config"
import { embeddedSignInPorts, phoneSignIn } from "@walletgate/core/otp"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest"
import { jsonCaller } from "../gatewayCall"

const PEM = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString()
const EPHEMERAL_WARNING = /ephemeral JWT signing key/
const JWKS = "/functions/v1/.well-known/jwks.json"

/** Phone sign-in over the embedded ports and `keys` (a later layer wins), its log lines kept. */
const signInGateway = (keys: Layer.Layer<never, unknown>) => {
  const lines: Array<string> = []
  const gateway: Gateway = composeGateway({
    modules: [phoneSignIn()],
    ports: Layer.mergeAll(embeddedSignInPorts(), keys),
    loggers: [Logger.make((options) => void lines.push(String(options.message)))]
  })
  return { gateway, lines, call: jsonCaller(gateway) }
}

/** The `kid`s of the gateway's published JWKS. */
const publishedKids = async (call: ReturnType<typeof jsonCaller>) => {
  const answer = await call("GET", JWKS)
  expect(answer.status).toBe(200)
  return (answer.body.keys as ReadonlyArray<{ kid: string }>).map((key) => key.kid)
}

describe("the embedded ephemeral signing key", () => {
  // jose makes key pairs with WebCrypto's generateKey: counted, to see whether a key pair was made.
  let generateKey: MockInstance
  beforeEach(() => {
    generateKey = vi.spyOn(globalThis.crypto.subtle, "generateKey")
  })
  afterEach(() => {
    generateKey.mockRestore()
  })

  it("is never made, nor warned about, when a key is configured (SigningKeys.fromPrivateKey)", async () => {
    const configured = SigningKeys.fromPrivateKey({ issuer: "walletgate", algorithm: "EdDSA", privateKey: PEM })
    const { gateway, lines, call } = signInGateway(configured)
    await gateway.ready()
    const kids = await publishedKids(call)
    expect(kids).toHaveLength(1)
    expect(generateKey).not.toHaveBeenCalled()
    expect(lines.filter((line) => EPHEMERAL_WARNING.test(line))).toEqual([])
    await gateway.dispose()
  })

  it("is never made, nor warned about, when WALLETGATE_SIGNING_KEY is set", async () => {
    const env = ConfigProvider.layer(ConfigProvider.fromEnv({ env: { WALLETGATE_SIGNING_KEY: PEM } }))
    const { gateway, lines, call } = signInGateway(signingKeysFromEnv("walletgate").pipe(Layer.provide(env)))
    await gateway.ready()
    expect(await publishedKids(call)).toHaveLength(1)
    expect(generateKey).not.toHaveBeenCalled()
    expect(lines.filter((line) => EPHEMERAL_WARNING.test(line))).toEqual([])
    await gateway.dispose()
  })

  it("is made once, with its warning, when no key is configured; every request sees the same key", async () => {
    const { gateway, lines, call } = signInGateway(Layer.empty)
    await gateway.ready()
    const [first, second] = await Promise.all([publishedKids(call), publishedKids(call)])
    expect(first).toHaveLength(1)
    expect(second).toEqual(first)
    expect(await publishedKids(call)).toEqual(first)
    expect(generateKey).toHaveBeenCalledTimes(1)
    expect(lines.filter((line) => EPHEMERAL_WARNING.test(line))).toHaveLength(1)
    await gateway.dispose()
  })
})
