import { type App, ClientStore, embeddedPorts, IdentityProviders, SecureRandom } from "@walletgate/core"
import { isGranted, registerApp, UnknownIdentityProvider } from "@walletgate/core/auth"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { RESERVED_PROVIDER_NAMES } from "../../src/auth/IdentityProviders"

const issuer = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  issuer: "https://id.example.com/",
  audience: "walletgate",
  jwksUrl: "https://id.example.com/.well-known/jwks.json",
  algorithms: ["RS256" as const],
  ...extra
})

describe("IdentityProviders: one verifier per name, for the whole deployment", () => {
  it("always has the native phone sign-in (phone, tel), and the registered issuers with `sub` as the default id claim", () => {
    const registry = IdentityProviders.make([issuer("acme"), issuer("okta", { subjectClaim: "uid" })])
    expect(registry.all.map((provider) => provider.name)).toEqual(["phone", "tel", "acme", "okta"])
    expect(registry.find("phone")).toEqual({ kind: "phone", name: "phone" })
    expect(registry.find("tel")).toMatchObject({ kind: "tel", name: "tel", testPhones: new Set() })
    // Declaring nothing keeps case (OIDC's sub is case-sensitive) and normalises Unicode to NFC.
    expect(registry.find("acme")).toMatchObject({
      kind: "jwks",
      subjectClaim: "sub",
      algorithms: ["RS256"],
      canonical: { case: "preserve", unicode: "NFC", pattern: undefined }
    })
    expect(registry.find("okta")).toMatchObject({ subjectClaim: "uid" })
    expect(registry.find("other")).toBeUndefined()
  })

  it("refuses every reserved name at construction", () => {
    for (const name of [...RESERVED_PROVIDER_NAMES, "phone", "tel", "automation", "test"]) {
      expect(() => IdentityProviders.make([issuer(name)])).toThrow(new RegExp(`"${name}" is reserved by walletgate`))
    }
  })

  it("refuses a name registered twice: two verifiers can never answer for one name", () => {
    expect(() => IdentityProviders.make([issuer("acme"), issuer("acme", { issuer: "https://evil.example/" })])).toThrow(
      /"acme" is already registered; one verifier per name/
    )
  })

  it("refuses an entry that is not a sound verifier", () => {
    const bad: ReadonlyArray<Record<string, unknown>> = [
      issuer("Upper"),
      issuer("__proto__"),
      issuer("constructor:x"),
      issuer("acme", { jwksUrl: "http://id.example.com/jwks.json" }),
      issuer("acme", { jwksUrl: "not a url" }),
      issuer("acme", { algorithms: [] }),
      issuer("acme", { algorithms: ["none"] }),
      issuer("acme", { algorithms: ["HS256"] }),
      issuer("acme", { issuer: "" }),
      issuer("acme", { audience: "" }),
      issuer("acme", { subjectClaim: "" }),
      issuer("acme", { canonical: { case: "upper" } }),
      issuer("acme", { canonical: { unicode: "NFD" } }),
      issuer("acme", { canonical: { pattern: "[" } })
    ]
    for (const entry of bad) {
      // @ts-expect-error: entries as an operator's configuration file could hold them
      expect(() => IdentityProviders.make([entry])).toThrow(/identity providers: entry 0 .* is invalid/)
    }
    // Plain HTTP is only for this machine.
    for (const jwksUrl of ["http://127.0.0.1:8080/jwks.json", "http://localhost/jwks", "http://[::1]:9/jwks"]) {
      expect(IdentityProviders.make([issuer("local", { jwksUrl })]).find("local")).toMatchObject({ jwksUrl })
    }
  })

  it("anchors a declared pattern, and refuses a test phone that is not E.164", () => {
    const registry = IdentityProviders.make([issuer("mail", { canonical: { case: "lower", pattern: "[^@]+@[^@]+" } })])
    const mail = registry.find("mail")
    expect(mail?.kind === "jwks" && mail.canonical.pattern?.test("a@b")).toBe(true)
    expect(mail?.kind === "jwks" && mail.canonical.pattern?.test("x a@b@c")).toBe(false)
    expect(() => IdentityProviders.make([], { testPhones: ["15005550006"] })).toThrow(/not E.164/)
  })

  it("grants only own entries: names on Object.prototype are never granted nor registered", () => {
    const app: App = { clientId: "wgc_a", secretHash: "00", providers: ["phone"], testMode: true }
    const registry = IdentityProviders.make()
    for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"]) {
      expect(isGranted(app, name)).toBe(false)
      expect(registry.find(name)).toBeUndefined()
    }
    expect(isGranted(app, "phone")).toBe(true)
  })

  it("registers apps only with registered providers, in code and in the embedded ports", async () => {
    const ports = Layer.mergeAll(IdentityProviders.layer([issuer("acme")]), ClientStore.memory(), SecureRandom.crypto)
    const run = <A, E>(effect: Effect.Effect<A, E, IdentityProviders | ClientStore | SecureRandom>) =>
      Effect.runPromise(effect.pipe(Effect.provide(ports)))
    const refused = await run(Effect.flip(registerApp({ providers: ["acme", "auth0", "automation"] })))
    expect(refused).toEqual(new UnknownIdentityProvider({ providers: ["auth0", "automation"] }))
    const saved = await run(
      Effect.gen(function* () {
        const { clientId } = yield* registerApp({ providers: ["acme", "phone", "acme"] })
        return yield* ClientStore.use((store) => store.find(clientId))
      })
    )
    expect(saved?.providers).toEqual(["acme", "phone"])
    expect(() =>
      embeddedPorts({ apps: [{ clientId: "wgc_b", secretHash: "00", providers: ["phone", "acme"], testMode: false }] })
    ).toThrow(/wgc_b is granted unregistered identity providers: acme/)
  })
})
