import { embeddedPorts, makeGateway, type OtpPolicyOptions } from "@walletgate/core"
import { SmsOutbox } from "@walletgate/core/testing"
import { RedisStores } from "@walletgate/redis"
import { Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Served, SIGN_IN, serve, VERIFY } from "./http"
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

const fleet = (keyPrefix: string, otp: OtpPolicyOptions) => {
  const outbox = new SmsOutbox()
  const instances: Array<Served> = []
  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const gateway = makeGateway({
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
