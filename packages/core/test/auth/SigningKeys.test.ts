import { generateKeyPairSync } from "node:crypto"
import { type Gateway, SigningKeys } from "@walletgate/core"
import { composeGateway } from "@walletgate/core/compose"
import { signingKeysFromEnv } from "@walletgate/core/config"
import { embeddedSignInPorts, phoneSignIn } from "@walletgate/core/otp"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import { calculateJwkThumbprint, createLocalJWKSet, type JWK, jwtVerify } from "jose"
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest"
import { jsonCaller } from "../gatewayCall"

const PEM = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString()
const EPHEMERAL_WARNING = /ephemeral JWT signing key/
const JWKS = "/functions/v1/.well-known/jwks.json"

const TEST_PHONE = "+15005550006"
const TEST_CODE = "424242"

/** Phone sign-in over the embedded ports (one test phone) and `keys` (a later layer wins), its log lines kept. */
const signInGateway = (keys: Layer.Layer<never, unknown>) => {
  const lines: Array<string> = []
  const gateway: Gateway = composeGateway({
    modules: [phoneSignIn()],
    ports: Layer.mergeAll(embeddedSignInPorts({ otp: { testPhones: { [TEST_PHONE]: TEST_CODE } } }), keys),
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

describe("a configured signing key", () => {
  // jose imports a key into WebCrypto with importKey (loading node's WebCrypto key code, a cold start's 3–9 ms).
  let importKey: MockInstance
  beforeEach(() => {
    importKey = vi.spyOn(globalThis.crypto.subtle, "importKey")
  })
  afterEach(() => {
    importKey.mockRestore()
  })

  /** The gateway's token for the test phone, verified against its own JWKS; the key's kid and public JWK. */
  const signedIn = async (call: ReturnType<typeof jsonCaller>) => {
    expect((await call("POST", "/functions/v1/signInWithOTP", { phone: TEST_PHONE })).status).toBe(200)
    const verified = await call("POST", "/functions/v1/verifyOTP", { phone: TEST_PHONE, token: TEST_CODE })
    expect(verified.status).toBe(200)
    const { keys } = (await call("GET", JWKS)).body as { keys: ReadonlyArray<JWK> }
    const token = String(verified.body.access_token)
    const { protectedHeader } = await jwtVerify(token, createLocalJWKSet({ keys: [...keys] }), {
      issuer: "walletgate"
    })
    return { kid: protectedHeader.kid, keys }
  }

  for (const [algorithm, pem] of [
    ["EdDSA", PEM],
    [
      "ES256",
      generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" }).toString()
    ]
  ] as const) {
    it(`${algorithm} in PEM is read at start without WebCrypto, which waits for the first token; the kid is the RFC 7638 thumbprint`, async () => {
      const configured = SigningKeys.fromPrivateKey({ issuer: "walletgate", algorithm, privateKey: pem })
      const { gateway, call } = signInGateway(configured)
      await gateway.ready()
      const published = ((await call("GET", JWKS)).body as { keys: ReadonlyArray<JWK> }).keys
      expect(importKey).not.toHaveBeenCalled()
      const { kid, keys } = await signedIn(call)
      expect(importKey).toHaveBeenCalled()
      expect(keys).toEqual(published)
      const [key] = keys
      expect(keys).toHaveLength(1)
      expect(key?.kid).toBe(kid)
      expect(key?.alg).toBe(algorithm)
      expect(key?.d).toBeUndefined()
      const { kid: _kid, alg: _alg, use: _use, ...jwk } = key ?? {}
      expect(kid).toBe(await calculateJwkThumbprint(jwk))
      await gateway.dispose()
    })
  }

  it("a PEM of another algorithm than the one named refuses the start", async () => {
    const configured = SigningKeys.fromPrivateKey({ issuer: "walletgate", algorithm: "ES256", privateKey: PEM })
    const { gateway } = signInGateway(configured)
    await expect(gateway.ready()).rejects.toThrow("the signing key is not a private ES256 key (PKCS#8 PEM)")
    await gateway.dispose()
  })

  it("WALLETGATE_SIGNING_KEY of another curve than Ed25519 is named, the start refused", async () => {
    const p256 = generateKeyPairSync("ec", { namedCurve: "P-256" })
      .privateKey.export({ type: "pkcs8", format: "pem" })
      .toString()
    const env = ConfigProvider.layer(ConfigProvider.fromEnv({ env: { WALLETGATE_SIGNING_KEY: p256 } }))
    const { gateway } = signInGateway(signingKeysFromEnv("walletgate").pipe(Layer.provide(env)))
    await expect(gateway.ready()).rejects.toThrow(/WALLETGATE_SIGNING_KEY is not an Ed25519 private key/)
    await gateway.dispose()
  })
})
