import {
  appAuth,
  composeGateway,
  defineModule,
  embeddedPorts,
  embeddedSignInPorts,
  kernelTx,
  phoneSignIn
} from "@walletgate/core"
import { Effect, Layer, Schema } from "effect"
import { describe, expect, it } from "vitest"

const request = (method: string, path: string, body?: unknown) => ({
  method,
  path,
  query: new URLSearchParams(),
  headers: body === undefined ? {} : { "content-type": "application/json" },
  ...(body === undefined ? {} : { rawBody: new TextEncoder().encode(JSON.stringify(body)) })
})

class Unmapped extends Schema.TaggedError<Unmapped>()("Unmapped", {}) {}

describe("composeGateway", () => {
  it("serves phone sign-in alone: its routes, health, and nothing of the wallet", async () => {
    const gateway = composeGateway({ modules: [phoneSignIn()], ports: embeddedSignInPorts(), loggers: [] })
    const sent = await gateway.handle(request("POST", "/functions/v1/signInWithOTP", { phone: "+14155552671" }))
    expect(sent.status).toBe(200)
    expect((await gateway.handle(request("GET", "/functions/v1/.well-known/jwks.json"))).status).toBe(200)
    const health = await gateway.handle(request("GET", "/v1/health"))
    expect([health.status, JSON.parse(health.body)]).toEqual([200, { status: "ok" }])
    const wallet = await gateway.handle(request("POST", "/v1/kernel/tx", {}))
    expect([wallet.status, JSON.parse(wallet.body).code]).toEqual([404, "not_found"])
    await gateway.dispose()
  })

  it("refuses a module whose needs are missing, naming what to add", () => {
    expect(() => composeGateway({ modules: [kernelTx()], ports: embeddedPorts() as never })).toThrow(
      "the module kernelTx needs the module appAuth; add it to modules"
    )
  })

  it("refuses a module listed twice", () => {
    expect(() => composeGateway({ modules: [appAuth(), appAuth()], ports: embeddedPorts(), loggers: [] })).toThrow(
      "a module is listed twice"
    )
  })

  it("refuses two slices that answer one error with different codes", () => {
    const clash = defineModule({
      name: "clash",
      layer: Layer.empty,
      routes: [],
      problems: { RateLimited: { status: 429, code: "slow_down", title: "Slow down", detail: () => "Later." } }
    } as never)
    expect(() => composeGateway({ modules: [clash], ports: Layer.empty, loggers: [] })).toThrow(
      "the error RateLimited is mapped to both rate_limited and slow_down"
    )
  })

  it("answers an error no slice maps as a 500 without detail, never leaking it", async () => {
    const module = defineModule({
      name: "broken",
      layer: Layer.empty,
      routes: [
        {
          method: "GET",
          path: "/broken",
          accepts: [],
          run: () => Effect.fail(new Unmapped())
        }
      ],
      problems: {}
    } as never)
    const gateway = composeGateway({ modules: [module], ports: Layer.empty, loggers: [] })
    const response = await gateway.handle(request("GET", "/broken"))
    expect([response.status, JSON.parse(response.body).code]).toEqual([500, "internal_error"])
    expect(response.body).not.toContain("Unmapped")
    await gateway.dispose()
  })
})
