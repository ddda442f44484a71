import { embeddedPorts, type Gateway, makeGateway, OtpStore, SmsSender, StoreUnavailable } from "@walletgate/core"
import { SmsOutbox } from "@walletgate/core/testing"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"

const post = async (gateway: Gateway, path: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await gateway.fetch(
    new Request(`http://gateway.test${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body)
    })
  )
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>
  }
}
const timed = async <A>(run: () => Promise<A>) => {
  const started = Date.now()
  const value = await run()
  return { value, ms: Date.now() - started }
}

describe("faults in the SMS provider and the store", () => {
  it("an SMS provider that hangs is a 502 within the policy's bound, and sign-in recovers", async () => {
    let hang = true
    const outbox = new SmsOutbox()
    const hanging = Layer.effect(
      SmsSender,
      Effect.gen(function* () {
        const working = yield* SmsSender
        return SmsSender.of({ send: (to, body) => (hang ? Effect.never : working.send(to, body)) })
      })
    ).pipe(Layer.provide(outbox.layer))
    const gateway = makeGateway({
      ports: Layer.mergeAll(embeddedPorts({ otp: { smsTimeoutSeconds: 1 } }), hanging),
      loggers: []
    })
    try {
      const failed = await timed(() => post(gateway, "/functions/v1/signInWithOTP", { phone: "+14155552671" }))
      expect([failed.value.status, failed.value.body.code]).toEqual([502, "sms_delivery_failed"])
      expect(failed.ms).toBeLessThan(3000)
      hang = false
      // No resend wait was left behind: the user can ask again at once, and the code works.
      expect((await post(gateway, "/functions/v1/signInWithOTP", { phone: "+14155552671" })).status).toBe(200)
      const code = outbox.latestCode("+14155552671")
      expect((await post(gateway, "/functions/v1/verifyOTP", { phone: "+14155552671", token: code })).status).toBe(200)
    } finally {
      await gateway.dispose()
    }
  })

  it("a store that fails is a 503 with Retry-After, and service resumes when it recovers", async () => {
    let failing = true
    const flaky = Layer.effect(
      OtpStore,
      Effect.gen(function* () {
        const inner = yield* OtpStore
        const guard = <A>(effect: Effect.Effect<A, StoreUnavailable>): Effect.Effect<A, StoreUnavailable> =>
          Effect.suspend(() => (failing ? Effect.fail(new StoreUnavailable({ operation: "otp" })) : effect))
        return OtpStore.of({
          issue: (...args) => guard(inner.issue(...args)),
          activate: (...args) => guard(inner.activate(...args)),
          withdraw: (...args) => guard(inner.withdraw(...args)),
          consume: (...args) => guard(inner.consume(...args))
        })
      })
    ).pipe(Layer.provide(OtpStore.memory))
    const gateway = makeGateway({
      ports: Layer.mergeAll(
        embeddedPorts(),
        SmsSender.console(() => undefined),
        flaky
      ),
      loggers: []
    })
    try {
      const down = await post(gateway, "/functions/v1/signInWithOTP", { phone: "+14155552671" })
      expect([down.status, down.body.code, down.headers.get("retry-after")]).toEqual([503, "store_unavailable", "1"])
      failing = false
      expect((await post(gateway, "/functions/v1/signInWithOTP", { phone: "+14155552671" })).status).toBe(200)
    } finally {
      await gateway.dispose()
    }
  })
})
