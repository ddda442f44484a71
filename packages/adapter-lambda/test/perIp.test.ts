import { embeddedPorts, type Gateway, makeGateway } from "@walletgate/core"
import { SmsOutbox } from "@walletgate/core/testing"
import { createHandler } from "@walletgate/lambda"
import * as Layer from "effect/Layer"
import { afterEach, describe, expect, it } from "vitest"
import { type EventKind, sendAsLambda } from "./events"

// The per-IP sign-in cap (20 an hour by default) through Lambda events. Behind an ALB the client may write any
// X-Forwarded-For it likes; the load balancer appends the address it saw, the right-most entry.

const AREA_CODES = [212, 415, 312, 646, 617, 202, 305, 713, 206, 303, 404, 503, 602, 702, 801, 214, 215, 216, 310, 313]
const phone = (i: number) =>
  `+1${AREA_CODES[i % AREA_CODES.length]}${230 + Math.floor(i / AREA_CODES.length)}${1000 + i}`

let gateway: Gateway | undefined
afterEach(async () => {
  await gateway?.dispose()
  gateway = undefined
})

/** Signs in phone `i` through an event of `kind`, from `client` as the load balancer saw it, the client forging more. */
const signInVia = (kind: EventKind, trustProxy: boolean) => {
  const outbox = new SmsOutbox()
  gateway = makeGateway({ ports: Layer.mergeAll(embeddedPorts(), outbox.layer), loggers: [] })
  const send = sendAsLambda(kind, createHandler(gateway, { trustProxy }))
  return async (i: number, client: string) =>
    (
      await send({
        method: "POST",
        path: "/functions/v1/signInWithOTP",
        // A new forged address each time, the real one appended by the load balancer.
        headers: { "content-type": "application/json", "x-forwarded-for": `10.0.${i}.1, ${client}` },
        body: JSON.stringify({ phone: phone(i) })
      })
    ).status
}

describe("the per-IP sign-in cap behind an ALB", () => {
  for (const kind of ["ALB", "ALB with multi-value headers"] as const) {
    it(`holds for the address the ALB appended when the proxy is trusted (${kind})`, async () => {
      const signIn = signInVia(kind, true)
      const statuses = []
      for (let i = 0; i < 21; i++) statuses.push(await signIn(i, "203.0.113.50"))
      expect(statuses.slice(0, 20).every((status) => status === 200)).toBe(true)
      expect(statuses[20]).toBe(429)
      // Another client behind the same ALB has a budget of its own.
      expect(await signIn(21, "198.51.100.9")).toBe(200)
    })

    it(`fails closed into one shared budget when the proxy is not trusted (${kind})`, async () => {
      const signIn = signInVia(kind, false)
      const statuses = []
      for (let i = 0; i < 21; i++) statuses.push(await signIn(i, "203.0.113.50"))
      expect(statuses).toContain(429)
      // No forged or appended address earns a budget of its own: another client is refused too.
      expect(await signIn(21, "198.51.100.9")).toBe(429)
    })
  }

  it("holds through API Gateway's source address, where no header counts", async () => {
    const signIn = signInVia("REST v1", false)
    const statuses = []
    for (let i = 0; i < 21; i++) statuses.push(await signIn(i, "203.0.113.50"))
    expect(statuses.slice(0, 20).every((status) => status === 200)).toBe(true)
    expect(statuses[20]).toBe(429)
  })
})
