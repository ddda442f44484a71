import { createHash } from "node:crypto"
import { embeddedPorts, type Gateway, type GatewayRequest, makeGateway, type OtpPolicyOptions } from "@walletgate/core"
import { SignInChallenge } from "@walletgate/core/otp"
import { SmsOutbox } from "@walletgate/core/testing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { afterEach, describe, expect, it } from "vitest"

// SMS pumping, attacked through the gateway as a client would: many source addresses, many phones.

const AREA_CODES = [
  212, 415, 312, 646, 617, 202, 305, 713, 206, 303, 404, 503, 602, 702, 801, 214, 215, 216, 310, 313, 314, 401, 402,
  412, 413, 414, 469, 480, 512, 513, 515, 516, 518, 520, 601, 603, 608, 609, 612, 614, 615, 616, 618, 619, 626, 630,
  631, 650, 651, 661
]
/** The `i`-th of 300 valid US numbers, each in an NPA-NXX of its own. */
const phoneInPrefix = (i: number) =>
  `+1${AREA_CODES[i % AREA_CODES.length]}${230 + Math.floor(i / AREA_CODES.length) * 7}${1000 + (i % 9000)}`
/** The `i`-th number of one NPA-NXX (212-736). */
const phoneOf212736 = (i: number) => `+1212736${String(1000 + i).padStart(4, "0")}`

let gateways: Array<Gateway> = []
let outbox = new SmsOutbox()
afterEach(async () => {
  for (const gateway of gateways) await gateway.dispose()
  gateways = []
})

const gatewayWith = (otp: OtpPolicyOptions = {}, extra: ReadonlyArray<Layer.Layer<SignInChallenge>> = []) => {
  outbox = new SmsOutbox()
  const gateway = makeGateway({ ports: Layer.mergeAll(embeddedPorts({ otp }), outbox.layer, ...extra), loggers: [] })
  gateways.push(gateway)
  return gateway
}

const encoder = new TextEncoder()
const signInRequest = (body: Record<string, unknown>, remoteAddress?: string): GatewayRequest => ({
  method: "POST",
  path: "/functions/v1/signInWithOTP",
  query: new URLSearchParams(),
  headers: { "content-type": "application/json" },
  rawBody: encoder.encode(JSON.stringify(body)),
  ...(remoteAddress === undefined ? {} : { remoteAddress })
})

/** Sends a sign-in for `phone` from `address`; answers the status, the problem's code and the Retry-After. */
const signIn = async (gateway: Gateway, phone: string, address?: string, challenge?: string) => {
  const response = await gateway.handle(
    signInRequest({ phone, ...(challenge === undefined ? {} : { challenge }) }, address)
  )
  const body = JSON.parse(response.body) as { code?: string }
  return { status: response.status, code: body.code, retryAfter: response.headers["retry-after"] }
}

const statusCounts = (statuses: ReadonlyArray<number>) => {
  const counts: Record<number, number> = {}
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1
  return counts
}

describe("SMS pumping", () => {
  it("counts the addresses of one IPv6 /64 against one per-IP cap", async () => {
    const gateway = gatewayWith()
    const statuses = []
    // 10 addresses of 2001:db8:1:2::/64, written as clients and proxies write them, 3 phones each.
    const addresses = Array.from({ length: 10 }, (_, i) =>
      i % 2 === 0 ? `2001:db8:1:2::${(i + 1).toString(16)}` : `2001:0DB8:0001:0002:${i}:0:0:${i}`
    )
    for (const [i, address] of addresses.entries()) {
      for (let j = 0; j < 3; j++) statuses.push((await signIn(gateway, phoneInPrefix(i * 3 + j), address)).status)
    }
    expect(statusCounts(statuses)).toEqual({ 200: 20, 429: 10 })
    expect(outbox.messages).toHaveLength(20)
    // Another /64 has its own budget.
    expect((await signIn(gateway, phoneInPrefix(100), "2001:db8:1:3::1")).status).toBe(200)
  })

  it("counts an IPv4-mapped IPv6 address as its IPv4 address", async () => {
    const gateway = gatewayWith({ sendsPerIpPerHour: 2 })
    expect((await signIn(gateway, phoneInPrefix(0), "198.51.100.7")).status).toBe(200)
    expect((await signIn(gateway, phoneInPrefix(1), "::ffff:198.51.100.7")).status).toBe(200)
    expect((await signIn(gateway, phoneInPrefix(2), "::FFFF:c633:6407")).status).toBe(429)
    // IPv4 addresses are counted exactly: the neighbour is not affected.
    expect((await signIn(gateway, phoneInPrefix(3), "198.51.100.8")).status).toBe(200)
  })

  it("stops 50 IPv4 addresses sending to many phones at the hourly ceiling", async () => {
    const gateway = gatewayWith({ globalSendsPerHour: 100 })
    const answers = []
    for (let i = 0; i < 150; i++) answers.push(await signIn(gateway, phoneInPrefix(i), `203.0.113.${i % 50}`))
    expect(statusCounts(answers.map((answer) => answer.status))).toEqual({ 200: 100, 429: 50 })
    expect(outbox.messages).toHaveLength(100)
    for (const refused of answers.slice(100)) {
      expect(refused.code).toBe("rate_limited")
      expect(Number(refused.retryAfter)).toBeGreaterThan(0)
    }
  })

  it("stops 50 IPv4 addresses sending into one NPA-NXX at its cap, by default", async () => {
    const gateway = gatewayWith()
    const statuses = []
    for (let i = 0; i < 50; i++) statuses.push((await signIn(gateway, phoneOf212736(i), `203.0.113.${i}`)).status)
    expect(statusCounts(statuses)).toEqual({ 200: 10, 429: 40 })
    expect(outbox.messages).toHaveLength(10)
    // Other exchanges are not affected.
    expect((await signIn(gateway, "+12127373100", "203.0.113.99")).status).toBe(200)
  })

  it("counts a refused send against no one's budget: not the sender's, not the ceiling", async () => {
    const gateway = gatewayWith({ sendsPerIpPerHour: 2, globalSendsPerHour: 12 })
    for (let i = 0; i < 10; i++) expect((await signIn(gateway, phoneOf212736(i), `192.0.2.${i}`)).status).toBe(200)
    // The exchange is full: five refusals from one address...
    for (let i = 10; i < 15; i++) expect((await signIn(gateway, phoneOf212736(i), "198.51.100.1")).status).toBe(429)
    // ...used none of its two sends, and none of the two left under the ceiling.
    expect((await signIn(gateway, phoneInPrefix(0), "198.51.100.1")).status).toBe(200)
    expect((await signIn(gateway, phoneInPrefix(1), "198.51.100.1")).status).toBe(200)
    expect((await signIn(gateway, phoneInPrefix(2), "198.51.100.2")).status).toBe(429)
    expect(outbox.messages).toHaveLength(12)
  })

  it("counts requests of unknown address against one shared per-IP budget (gateway.fetch)", async () => {
    const gateway = gatewayWith({ sendsPerIpPerHour: 3 })
    const statuses = []
    for (let i = 0; i < 6; i++) {
      const response = await gateway.fetch(
        new Request("http://walletgate.test/functions/v1/signInWithOTP", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ phone: phoneInPrefix(i) })
        })
      )
      statuses.push(response.status)
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429])
    // An unparsable address is no address: it shares that budget too.
    expect((await signIn(gateway, phoneInPrefix(10), "not-an-address")).status).toBe(429)
    expect((await signIn(gateway, phoneInPrefix(11), "192.0.2.1")).status).toBe(200)
    expect(outbox.messages).toHaveLength(4)
  })
})

/**
 * A proof of work bound to the phone: `<issued-at ms>.<nonce>` whose SHA-256 with the phone starts with `bits`
 * zero bits, fresh (at most 2 minutes old) and used once. A real, small challenge: a client solves it in ~4,000
 * hashes at 12 bits.
 */
const proofOfWork = (bits: number) => {
  const used = new Set<string>()
  const leadingZeroBits = (digest: Buffer) => {
    let count = 0
    for (const byte of digest) {
      if (byte === 0) {
        count += 8
        continue
      }
      return count + Math.clz32(byte) - 24
    }
    return count
  }
  const valid = (phone: string, answer: string, now: number) => {
    const match = /^(\d{13})\.(\d{1,12})$/.exec(answer)
    if (match === null || used.has(answer)) return false
    const issuedAt = Number(match[1])
    if (issuedAt > now || now - issuedAt > 120_000) return false
    const digest = createHash("sha256").update(`${phone}|${answer}`).digest()
    return leadingZeroBits(digest) >= bits
  }
  const layer = Layer.succeed(
    SignInChallenge,
    SignInChallenge.of({
      verify: ({ phone, answer }) =>
        Effect.sync(() => {
          if (answer === undefined || !valid(phone, answer, Date.now())) return false
          used.add(answer)
          return true
        })
    })
  )
  const solve = (phone: string) => {
    const issuedAt = Date.now()
    for (let nonce = 0; ; nonce++) {
      const answer = `${issuedAt}.${nonce}`
      if (valid(phone, answer, issuedAt)) return answer
    }
  }
  return { layer, solve }
}

describe("the sign-in challenge", () => {
  it("refuses a send without a valid answer before any SMS or count, and passes one with it", async () => {
    const pow = proofOfWork(12)
    const gateway = gatewayWith({ sendsPerIpPerHour: 1 }, [pow.layer])
    const phone = "+14155552671"
    const missing = await signIn(gateway, phone, "192.0.2.1")
    expect(missing).toMatchObject({ status: 403, code: "challenge_required" })
    const wrong = await signIn(gateway, phone, "192.0.2.1", `${Date.now()}.1`)
    expect(wrong).toMatchObject({ status: 403, code: "challenge_required" })
    // Solved for another phone: not valid for this one.
    expect(await signIn(gateway, phone, "192.0.2.1", pow.solve("+14169671111"))).toMatchObject({ status: 403 })
    expect(outbox.messages).toHaveLength(0)

    // The refusals used neither the phone's resend wait nor the address's budget of one.
    const answer = pow.solve(phone)
    expect((await signIn(gateway, phone, "192.0.2.1", answer)).status).toBe(200)
    expect(outbox.messages.map((message) => message.to)).toEqual([phone])
    // An answer works once.
    expect((await signIn(gateway, "+14169671111", "192.0.2.2", answer)).status).toBe(403)
  })

  it("asks for nothing by default", async () => {
    const gateway = gatewayWith()
    expect((await signIn(gateway, "+14155552671", "192.0.2.1")).status).toBe(200)
  })
})
