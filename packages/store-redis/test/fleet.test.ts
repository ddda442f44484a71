import { generateKeyPairSync } from "node:crypto"
import {
  composeGateway,
  embeddedPorts,
  embeddedSignInPorts,
  makeGateway,
  type OtpPolicyOptions,
  phoneSignIn,
  SigningKeys
} from "@walletgate/core"
import { identitySafe, testUserIdentity } from "@walletgate/core/operations"
import { SmsOutbox } from "@walletgate/core/testing"
import { RedisConnection, RedisSignInStores, RedisStores } from "@walletgate/redis"
import { Layer } from "effect"
import { keccak256, parseEther, toHex } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { deriveOwnerKey } from "../../core/src/operations/KeyVault"
import { freshMasterSecret, type SharedDevnet, sharedDevnet } from "../../core/test/devnet/shared"
import { phoneTestApp, registerApps } from "./apps"
import { eventually, type Served, SIGN_IN, serve, VERIFY } from "./http"
import { type RedisServer, startRedisServer } from "./redis-server"

// Two gateway instances, each with its own Redis connection behind its own Express server, on one Redis:
// what a fleet behind a load balancer (or many Lambdas) sees. Codes are stored as HMACs, so the instances
// share the `codeSecret`.
const codeSecret = "a-secret-every-instance-of-the-fleet-shares"

let server: RedisServer
beforeAll(async () => {
  server = await startRedisServer()
})
afterAll(() => server?.stop())

/**
 * Two instances on one Redis: both whole gateways on `RedisStores.layer`, or (`first: "signIn"`) the first a function
 * of phone sign-in alone on `RedisSignInStores` over its own `RedisConnection`, as examples/lambda/src/signIn.ts.
 */
const fleet = (keyPrefix: string, otp: OtpPolicyOptions, first: "whole" | "signIn" = "whole") => {
  const outbox = new SmsOutbox()
  const instances: Array<Served> = []
  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const gateway =
        i === 0 && first === "signIn"
          ? composeGateway({
              modules: [phoneSignIn()],
              ports: Layer.mergeAll(
                embeddedSignInPorts({ otp: { codeSecret, ...otp } }),
                outbox.layer,
                RedisSignInStores.pipe(Layer.provide(RedisConnection.layer({ url: server.url, keyPrefix })))
              ),
              loggers: []
            })
          : makeGateway({
              ports: Layer.mergeAll(
                embeddedPorts({ otp: { codeSecret, ...otp } }),
                outbox.layer,
                RedisStores.layer({ url: server.url, keyPrefix })
              ),
              loggers: []
            })
      instances.push(await serve(gateway))
    }
  })
  afterAll(async () => {
    for (const instance of instances) await instance.close()
  })
  const instance = (i: number): Served => {
    const served = instances[i % 2]
    if (served === undefined) throw new Error("the fleet is not started")
    return served
  }
  return { outbox, a: () => instance(0), b: () => instance(1), instance }
}

describe("two gateways on one Redis", () => {
  const { outbox, a, b, instance } = fleet("fleet:", { sendsPerIpPerHour: 1000 })

  it("verifies via B a code sent via A", async () => {
    const phone = "+14155552671"
    expect((await a().post(SIGN_IN, { phone })).status).toBe(200)
    const verified = await b().post(VERIFY, { phone, token: outbox.latestCode(phone) })
    expect(verified.status).toBe(200)
    expect(await verified.json()).toMatchObject({ user: { phone } })
  })

  it("shares the resend interval", async () => {
    const phone = "+14169671111"
    expect((await a().post(SIGN_IN, { phone })).status).toBe(200)
    const again = await b().post(SIGN_IN, { phone })
    expect(again.status).toBe(429)
    expect(Number(again.headers.get("retry-after"))).toBeGreaterThan(50)
  })

  it("yields exactly one token for 50 concurrent verifications split across both", async () => {
    const phone = "+12127363100"
    expect((await b().post(SIGN_IN, { phone })).status).toBe(200)
    const token = outbox.latestCode(phone)
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => instance(i).post(VERIFY, { phone, token })))
    const statuses = answers.map((answer) => answer.status)
    expect(statuses.filter((status) => status === 200)).toHaveLength(1)
    expect(statuses.filter((status) => status === 401)).toHaveLength(49)
  })

  it("sends exactly one SMS for 20 concurrent sign-ins split across both", async () => {
    const phone = "+13127445000"
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => instance(i).post(SIGN_IN, { phone })))
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, ...new Array(19).fill(429)])
    expect(outbox.messages.filter((message) => message.to === phone)).toHaveLength(1)
  })

  it("gives a phone one user whichever instance verifies it", async () => {
    const phone = "+16462223333"
    // A verified code is gone, resend wait included, so the phone can sign in again at once.
    const signIn = async (via: Served) => {
      expect((await via.post(SIGN_IN, { phone })).status).toBe(200)
      const answer = await via.post(VERIFY, { phone, token: outbox.latestCode(phone) })
      expect(answer.status).toBe(200)
      return ((await answer.json()) as { user: { id: string } }).user.id
    }
    const first = await signIn(a())
    expect(await signIn(b())).toBe(first)
  })
})

describe("a function of phone sign-in alone (RedisSignInStores) beside a whole gateway, on one Redis", () => {
  const { outbox, a, b } = fleet("fleet-sign-in:", { sendsPerIpPerHour: 1000 }, "signIn")

  it("verifies via the whole gateway a code the sign-in function sent, once: a replay via either is refused", async () => {
    const phone = "+14155552672"
    expect((await a().post(SIGN_IN, { phone })).status).toBe(200)
    const token = outbox.latestCode(phone)
    const verified = await b().post(VERIFY, { phone, token })
    expect(verified.status).toBe(200)
    const user = ((await verified.json()) as { user: { id: string } }).user.id
    expect((await a().post(VERIFY, { phone, token })).status).toBe(401)
    expect((await b().post(VERIFY, { phone, token })).status).toBe(401)
    // The same user whichever instance verifies: the users are one store.
    expect((await a().post(SIGN_IN, { phone })).status).toBe(200)
    const again = await a().post(VERIFY, { phone, token: outbox.latestCode(phone) })
    expect(((await again.json()) as { user: { id: string } }).user.id).toBe(user)
  })
})

describe("a function of phone sign-in alone beside a whole gateway, on one Redis, with a small per-IP cap", () => {
  const { a, b } = fleet("fleet-sign-in-ip:", { sendsPerIpPerHour: 3 }, "signIn")

  it("shares the per-IP hourly cap with the whole gateway", async () => {
    const phones = ["+14152220200", "+14152220201", "+14152220202", "+14152220203", "+14152220204"]
    const statuses = []
    for (const [i, phone] of phones.entries())
      statuses.push((await (i % 2 === 0 ? a() : b()).post(SIGN_IN, { phone })).status)
    // Each instance saw at most three sends, so only a shared counter refuses the fourth and fifth.
    expect(statuses).toEqual([200, 200, 200, 429, 429])
  })
})

describe("two gateways on one Redis, with a small per-IP cap", () => {
  const { a, b } = fleet("fleet-ip:", { sendsPerIpPerHour: 3 })

  it("shares the per-IP hourly cap", async () => {
    const phones = ["+14152220100", "+14152220101", "+14152220102", "+14152220103", "+14152220104"]
    const statuses = []
    for (const [i, phone] of phones.entries())
      statuses.push((await (i % 2 === 0 ? a() : b()).post(SIGN_IN, { phone })).status)
    // Each instance saw at most three sends, so only a shared counter refuses the fourth and fifth.
    expect(statuses).toEqual([200, 200, 200, 429, 429])
  })
})

describe("two gateways on one Redis, against SMS pumping", () => {
  const { outbox, a, b } = fleet("fleet-pumping:", {
    resendIntervalSeconds: 1,
    sendsPerPhone: 2,
    sendsPerPrefixPerHour: 3,
    globalSendsPerHour: 6,
    sendsPerIpPerHour: 1000
  })
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

  it("keeps the pending code valid past the per-phone cap, whichever instance refuses", async () => {
    const phone = "+13127445001"
    expect((await a().post(SIGN_IN, { phone })).status).toBe(200)
    await pause(1100)
    expect((await b().post(SIGN_IN, { phone })).status).toBe(200)
    const pending = outbox.latestCode(phone)
    await pause(1100)
    const refused = await a().post(SIGN_IN, { phone })
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(900)
    expect((await b().post(VERIFY, { phone, token: pending })).status).toBe(200)
  })

  it("shares the per-prefix cap and the ceiling", async () => {
    // Three more sends fill the ceiling of six (the case above sent two), the NPA-NXX 646-222 its cap of three.
    const statuses = []
    for (const [i, phone] of ["+16462223001", "+16462223002", "+16462223003", "+16462223004"].entries()) {
      statuses.push((await (i % 2 === 0 ? a() : b()).post(SIGN_IN, { phone })).status)
    }
    expect(statuses).toEqual([200, 200, 200, 429])
    expect((await a().post(SIGN_IN, { phone: "+14152220199" })).status).toBe(200)
    expect((await b().post(SIGN_IN, { phone: "+14152220198" })).status).toBe(429)
  })
})

// Money movement across the fleet: both instances derive the same wallets (one master secret), verify
// each other's access tokens (one signing key) and read the same apps, idempotency records, account locks
// and transaction log from Redis, and send user operations to one bundler (the devnet's alto): no state of their own.
describe("two gateways on one Redis and one chain", () => {
  const keyPrefix = "fleet-chain:"
  const masterSecret = freshMasterSecret()
  const client = { clientId: "wgc_fleet", clientSecret: "wgs_fleet_secret" }
  let chain: SharedDevnet
  const instances: Array<Served> = []
  beforeAll(async () => {
    chain = await sharedDevnet()
    // Apps live in Redis now: register the app once, for every instance.
    await registerApps({ url: server.url, keyPrefix }, [phoneTestApp(client)])
    const signingKey = generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }).toString()
    for (let i = 0; i < 2; i++) {
      const gateway = makeGateway({
        ports: Layer.mergeAll(
          embeddedPorts({ masterSecret, otp: { codeSecret }, networks: [chain.network] }),
          SigningKeys.fromPrivateKey({ issuer: "walletgate", algorithm: "EdDSA", privateKey: signingKey }),
          RedisStores.layer({ url: server.url, keyPrefix })
        ),
        loggers: []
      })
      instances.push(await serve(gateway))
    }
  })
  afterAll(async () => {
    for (const instance of instances) await instance.close()
  })

  it("sends one transaction for one Idempotency-Key sent 10 times concurrently, split across both", async () => {
    const [a, b] = instances
    if (a === undefined || b === undefined) throw new Error("the fleet is not started")
    const granted = await a.post("/v1/auth", { client_id: client.clientId, client_secret: client.clientSecret })
    expect(granted.status).toBe(200)
    const bearer = `Bearer ${((await granted.json()) as { access_token: string }).access_token}`

    const userId = "phone:00000000-0000-4000-8000-0000000000f1"
    // Blank auth: the app's own test user of that name.
    const identity = testUserIdentity(client.clientId, userId)
    const wallet = identitySafe(privateKeyToAccount(deriveOwnerKey(masterSecret, identity)).address, identity).address
    await fetch(chain.anvil.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "anvil_setBalance",
        params: [wallet, toHex(parseEther("1"))]
      })
    })
    const recipient = privateKeyToAccount(keccak256(toHex("fleet-recipient"))).address
    // A test-mode app may send blank auth on a test network.
    const body = { userId, chain: "anvil", to: [recipient], value: ["7"], data: ["0x"], auth: "" }
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 === 0 ? a : b).post("/v1/kernel/tx", body, { authorization: bearer, "idempotency-key": "fleet-pay-7" })
      )
    )
    const bodies = await Promise.all(answers.map((answer) => answer.text()))
    expect(answers.map((answer) => answer.status)).toEqual(new Array(10).fill(200))
    expect(new Set(bodies).size).toBe(1)
    expect(answers.filter((answer) => answer.headers.get("idempotent-replayed") === "true")).toHaveLength(9)

    const sent = JSON.parse(bodies[0] ?? "{}") as { id: string; userOpHash: string; account: string }
    expect(sent.account).toBe(wallet)
    // The transaction log is shared: the instance that did not send it reports it too.
    for (const instance of [b, a]) {
      await eventually("the transaction is confirmed", async () => {
        const status = await instance.get(`/v1/kernel/tx/${sent.id}`, { authorization: bearer })
        return status.status === 200 && ((await status.json()) as { status: string }).status === "confirmed"
      })
    }
    expect(await chain.publicClient.getBalance({ address: recipient })).toBe(7n)
  })
})
