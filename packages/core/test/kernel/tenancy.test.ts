// Findings 1, 2 and 8 of the tenancy issue, attacked as they were found: two apps on one anvil, and a JWKS
// server on 127.0.0.1 that the attacking app controls. Each of these attacks moved money on the code before
// identity namespaces and key domains (alice lost 0.9 of 1 ETH, the payroll account 4.5 of 5 ETH, and
// `constructor:x` was answered 200).
import { type App, ClientStore, embeddedPorts, IdentityProviders, SecureRandom } from "@walletgate/core"
import { hashClientSecret, registerApp, UnknownIdentityProvider } from "@walletgate/core/auth"
import { testUserIdentity, userWalletIdentity } from "@walletgate/core/operations"
import { Effect, Layer } from "effect"
import { type Address, parseEther } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CLIENT, freshAddress, startKernelFixture } from "./fixture"
import { type Issuer, startIssuer } from "./issuer"

/** The registration of `issuer` as the provider `name`. */
const registered = (name: string, issuer: Issuer) => ({
  name,
  jwksUrl: issuer.jwksUrl,
  issuer: issuer.issuer,
  audience: issuer.audience,
  algorithms: ["RS256" as const]
})
const app = (clientId: string, providers: ReadonlyArray<string>): App => ({
  clientId,
  secretHash: hashClientSecret(`${clientId}-secret`),
  providers,
  testMode: true
})
const credentials = (clientId: string) =>
  clientId === CLIENT.clientId ? CLIENT : { clientId, clientSecret: `${clientId}-secret` }

describe("identity namespaces and key domains, on anvil with two apps", () => {
  let legit: Issuer
  let attackerIssuer: Issuer
  let f: Awaited<ReturnType<typeof startKernelFixture>>
  let payroll: Address

  beforeAll(async () => {
    // The attacker's issuer even claims the legitimate one's `iss` and audience: only its keys differ.
    legit = await startIssuer({ issuer: "https://auth0.example.com" })
    attackerIssuer = await startIssuer({ issuer: "https://auth0.example.com" })
    f = await startKernelFixture({
      identityProviders: [registered("auth0", legit), registered("evil-idp", attackerIssuer)],
      grants: ["auth0"],
      apps: [
        // The attacking app, with the identity provider it runs, registered for it by the operator.
        app("wgc_attacker", ["evil-idp"]),
        // A second attacking app that the operator also granted the victim's provider.
        app("wgc_attacker_granted", ["evil-idp", "auth0"])
      ],
      // A record granting a name nobody can register (a stale or hand-edited record).
      storedApps: [app("wgc_tampered", ["automation", "phone"])],
      automation: () => [{ accountKey: "payroll" }]
    })
    payroll = f.automationAccounts[0]?.address as Address
  })
  afterAll(async () => {
    await f?.stop()
    await legit?.stop()
    await attackerIssuer?.stop()
  })

  /** Sends `amount` to a fresh address from `userId`'s wallet as `clientId`; waits for it to be final if sent. */
  const attempt = async (clientId: string, userId: string, auth: string, chain: string, amount: bigint) => {
    const bearer = { authorization: `Bearer ${await f.accessToken(credentials(clientId))}` }
    const answer = await f.call(
      "POST",
      "/v1/kernel/tx",
      { userId, chain, to: [freshAddress()], value: [String(amount)], data: ["0x"], auth },
      bearer
    )
    if (answer.status === 200) expect((await f.settled(answer.body.id, bearer)).status).toBe("confirmed")
    return answer
  }
  const balance = (address: Address) => f.publicClient.getBalance({ address })

  it("finding 1: no other app's issuer reaches alice's wallet, and the attacker's identities have their own", async () => {
    const alice = await f.walletOf(userWalletIdentity("auth0", "alice"))
    await f.fund(alice, parseEther("1"))
    const forged = await attackerIssuer.sign("alice")

    // The attacking app is not granted auth0; the one that is cannot pass off its own token as auth0's.
    const notGranted = await attempt("wgc_attacker", "auth0:alice", forged, "live", parseEther("0.9"))
    expect([notGranted.status, notGranted.body.code]).toEqual([403, "forbidden"])
    const granted = await attempt("wgc_attacker_granted", "auth0:alice", forged, "live", parseEther("0.9"))
    expect([granted.status, granted.body.code]).toEqual([401, "invalid_auth"])

    // Its own provider proves `alice` there, which is another wallet.
    const own = await attempt("wgc_attacker", "evil-idp:alice", forged, "live", 0n)
    expect(own.status).toBe(200)
    expect(own.body.account).toBe(await f.walletOf(userWalletIdentity("evil-idp", "alice")))
    expect(own.body.account).not.toBe(alice)

    // Blank auth reaches only the calling app's own test user, never alice's wallet: not the attacker's, and
    // not even the victim app's.
    for (const clientId of ["wgc_attacker_granted", CLIENT.clientId]) {
      const blank = await attempt(clientId, "auth0:alice", "", "anvil", 0n)
      expect(blank.status).toBe(200)
      expect(blank.body.account).toBe(await f.walletOf(testUserIdentity(clientId, "auth0:alice")))
      expect(blank.body.account).not.toBe(alice)
    }
    expect(await balance(alice)).toBe(parseEther("1"))

    // The control: alice's own token, through an app granted auth0, does reach her wallet.
    const hers = await attempt(CLIENT.clientId, "auth0:alice", await legit.sign("alice"), "live", 1n)
    expect(hers.status).toBe(200)
    expect(hers.body.account).toBe(alice)
    expect(await balance(alice)).toBe(parseEther("1") - 1n)
  })

  it("finding 2: automation:<name> never reaches the automation account, verified or with blank auth", async () => {
    await f.fund(payroll, parseEther("5"))
    // Nobody can register the name, and no app can be granted it.
    const reserved = registered("automation", attackerIssuer)
    expect(() => IdentityProviders.make([reserved])).toThrow(/"automation" is reserved by walletgate/)
    expect(() => embeddedPorts({ apps: [app("wgc_x", ["automation"])] })).toThrow(/unregistered identity providers/)
    const registration = await Effect.runPromise(
      registerApp({ providers: ["automation"] }).pipe(
        Effect.flip,
        Effect.provide(Layer.mergeAll(IdentityProviders.layer(), ClientStore.memory(), SecureRandom.crypto))
      )
    )
    expect(registration).toBeInstanceOf(UnknownIdentityProvider)

    // A record granting it anyway is refused, with a token or blank auth.
    const forged = await attackerIssuer.sign("payroll")
    for (const [auth, chain] of [
      [forged, "live"],
      ["", "anvil"]
    ] as const) {
      const answer = await attempt("wgc_tampered", "automation:payroll", auth, chain, parseEther("4"))
      expect([answer.status, answer.body.code]).toEqual([403, "forbidden"])
    }

    // Ids that spell the account's name under a granted provider reach wallets of their own.
    const forgedColon = await attackerIssuer.sign("automation:payroll")
    const spelled = [
      await attempt("wgc_attacker", "evil-idp:payroll", forged, "live", 0n),
      await attempt("wgc_attacker", "evil-idp:automation:payroll", forgedColon, "live", 0n),
      await attempt("wgc_attacker", "evil-idp:automation:payroll", "", "anvil", 0n),
      await attempt("wgc_attacker", "evil-idp:payroll", "", "anvil", 0n)
    ]
    expect(spelled.map((answer) => answer.status)).toEqual([200, 200, 200, 200])
    const accounts = spelled.map((answer) => answer.body.account)
    expect(new Set([...accounts, payroll]).size).toBe(5)
    expect(accounts[1]).toBe(await f.walletOf(userWalletIdentity("evil-idp", "automation:payroll")))
    expect(accounts[2]).toBe(await f.walletOf(testUserIdentity("wgc_attacker", "evil-idp:automation:payroll")))
    expect(payroll).toBe(await f.automationWalletOf("payroll"))
    expect(await balance(payroll)).toBe(parseEther("5"))
  })

  it("finding 8: constructor:<x> and __proto__:<x> do not pass the provider allow-list", async () => {
    const viaConstructor = await attempt(CLIENT.clientId, "constructor:x", "", "anvil", 0n)
    expect([viaConstructor.status, viaConstructor.body.code]).toEqual([403, "forbidden"])
    const proto = await attempt(CLIENT.clientId, "__proto__:x", "", "anvil", 0n)
    expect([proto.status, proto.body.code]).toEqual([400, "invalid_request"])
    const registry = IdentityProviders.make()
    for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
      expect(registry.find(name)).toBeUndefined()
    }
  })
})
