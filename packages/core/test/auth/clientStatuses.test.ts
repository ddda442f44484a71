import { embeddedPorts, makeGateway } from "@walletgate/core"
import { hashClientSecret } from "@walletgate/core/auth"
import { afterAll, describe, expect, it } from "vitest"

const apps = [
  { clientId: "app-1", secretHash: hashClientSecret("secret-1"), providers: ["phone"], testMode: false },
  { clientId: "app-2", secretHash: hashClientSecret("secret-2"), providers: ["phone"], testMode: false }
]
const ports = () => embeddedPorts({ apps })
const call = async (
  gateway: ReturnType<typeof makeGateway>,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {}
) => {
  const response = await gateway.fetch(
    new Request(`http://gateway.test${path}`, {
      method,
      headers: { "content-type": "application/json", ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
  )
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}
const grant = (gateway: ReturnType<typeof makeGateway>, client: string) =>
  call(gateway, "POST", "/v1/auth", { client_id: client, client_secret: client.replace("app", "secret") })
const tx = { userId: "phone:x", chain: "anvil", to: [], value: [], data: [], auth: "" }

describe("refusal statuses for Patch Wallet clients", () => {
  const standard = makeGateway({ ports: ports(), loggers: [] })
  const patch = makeGateway({ ports: ports(), loggers: [], kernel: { clientStatuses: "patch" } })
  afterAll(async () => {
    await standard.dispose()
    await patch.dispose()
  })

  it("answers an invalid or expired access token 403 in the patch profile (the SDK then refreshes), 401 otherwise", async () => {
    for (const path of ["/v1/kernel/tx", "/v1/kernel/tx/some-id"]) {
      const method = path === "/v1/kernel/tx" ? "POST" : "GET"
      const body = method === "POST" ? tx : undefined
      const stale = { authorization: "Bearer eyJhbGciOiJFUzI1NiJ9.e30.c2ln" }
      expect(await call(standard, method, path, body, stale)).toMatchObject({
        status: 401,
        body: { code: "invalid_token" }
      })
      expect(await call(patch, method, path, body, stale)).toMatchObject({
        status: 403,
        body: { code: "invalid_token" }
      })
    }
  })
})

describe("token issuance per client", () => {
  const gateway = makeGateway({ ports: ports(), loggers: [], apps: { tokensPerMinute: 3 } })
  afterAll(() => gateway.dispose())

  it("answers 429 with Retry-After once a client has its tokens of the minute; other clients are unaffected", async () => {
    for (let round = 0; round < 3; round++) expect((await grant(gateway, "app-1")).status).toBe(200)
    const looping = await gateway.fetch(
      new Request("http://gateway.test/v1/auth", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ client_id: "app-1", client_secret: "secret-1" })
      })
    )
    expect(looping.status).toBe(429)
    expect(Number(looping.headers.get("retry-after"))).toBeGreaterThan(0)
    expect(((await looping.json()) as { code: string }).code).toBe("rate_limited")
    expect((await grant(gateway, "app-2")).status).toBe(200)
  })

  it("does not count wrong secrets against the client's tokens", async () => {
    const fresh = makeGateway({ ports: ports(), loggers: [], apps: { tokensPerMinute: 1 } })
    for (let round = 0; round < 5; round++) {
      const wrong = await call(fresh, "POST", "/v1/auth", { client_id: "app-2", client_secret: "nope" })
      expect(wrong.status).toBe(401)
    }
    expect((await grant(fresh, "app-2")).status).toBe(200)
    await fresh.dispose()
  })
})
