import { embeddedPorts, makeGateway } from "@walletgate/core"
import { hashClientSecret } from "@walletgate/core/auth"
import { afterAll, describe, expect, it } from "vitest"

// Resolving reads no chain: the address of a wallet is a function of its identity and the deployment's secret.
const apps = [
  { clientId: "app-1", secretHash: hashClientSecret("secret-1"), providers: ["phone", "tel"], testMode: true },
  { clientId: "app-2", secretHash: hashClientSecret("secret-2"), providers: ["phone"], testMode: false }
]
const MASTER = "resolver-test-master-secret-0123456789abcdef"
type Gateway = ReturnType<typeof makeGateway>
const gatewayWith = (kernel: Parameters<typeof makeGateway>[0] extends infer O ? O : never) =>
  makeGateway({ ports: embeddedPorts({ apps, masterSecret: MASTER }), loggers: [], ...kernel })
const post = async (gateway: Gateway, path: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await gateway.fetch(
    new Request(`http://gateway.test${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body)
    })
  )
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}
const bearerOf = async (gateway: Gateway, client: "app-1" | "app-2") => {
  const granted = await post(gateway, "/v1/auth", { client_id: client, client_secret: client.replace("app", "secret") })
  return { authorization: `Bearer ${String(granted.body.access_token)}` }
}
type Users = ReadonlyArray<{ readonly userId: string; readonly accountAddress: string }>

describe("POST /v1/resolver", () => {
  const closed = gatewayWith({})
  const open = gatewayWith({ kernel: { resolver: { access: "open", perMinute: 3 } } })
  const patch = gatewayWith({ kernel: { clientStatuses: "patch" } })
  afterAll(async () => {
    for (const gateway of [closed, open, patch]) await gateway.dispose()
  })

  it("answers each id's wallet address in order, the same on every ask and on every gateway of the deployment", async () => {
    const ids = ["tel:+14155552671", "phone:5c0f-user", "tel:+14155552672", "test:alice"]
    const first = await post(closed, "/v1/resolver", { userIds: ids }, await bearerOf(closed, "app-1"))
    expect(first.status).toBe(200)
    const users = first.body.users as Users
    expect(users.map((user) => user.userId)).toEqual(ids)
    for (const user of users) expect(user.accountAddress).toMatch(/^0x[0-9a-fA-F]{40}$/)
    expect(new Set(users.map((user) => user.accountAddress)).size).toBe(ids.length)
    const again = await post(patch, "/v1/resolver", { userIds: ids }, await bearerOf(patch, "app-1"))
    expect(again.body.users).toEqual(users)
    // The Patch SDK sends the ids as one comma-separated string.
    const joined = await post(closed, "/v1/resolver", { userIds: ids.join(",") }, await bearerOf(closed, "app-1"))
    expect(joined).toMatchObject({ status: 200, body: { users } })
  })

  it("requires an app's token unless the operator opened it, and resolves only providers the app is granted", async () => {
    expect(await post(closed, "/v1/resolver", { userIds: ["tel:+14155552671"] })).toMatchObject({
      status: 401,
      body: { code: "invalid_token" }
    })
    const app2 = await bearerOf(closed, "app-2")
    expect(await post(closed, "/v1/resolver", { userIds: ["tel:+14155552671"] }, app2)).toMatchObject({
      status: 403,
      body: { code: "forbidden" }
    })
    // A test user is an app's own: another app, or anyone on an open resolver, cannot name it.
    expect(await post(closed, "/v1/resolver", { userIds: ["test:alice"] }, app2)).toMatchObject({ status: 403 })
    expect(await post(open, "/v1/resolver", { userIds: ["test:alice"] })).toMatchObject({ status: 403 })
    expect(await post(open, "/v1/resolver", { userIds: ["google:1"] })).toMatchObject({ status: 403 })
  })

  it("serves anyone when open, with the same addresses, and limits each client address", async () => {
    const withToken = await post(
      closed,
      "/v1/resolver",
      { userIds: ["tel:+14155552671"] },
      await bearerOf(closed, "app-1")
    )
    const anonymous = await post(open, "/v1/resolver", { userIds: ["tel:+14155552671"] })
    expect(anonymous).toMatchObject({ status: 200, body: { users: withToken.body.users } })
    await post(open, "/v1/resolver", { userIds: ["tel:+14155552671"] })
    await post(open, "/v1/resolver", { userIds: ["tel:+14155552671"] })
    expect(await post(open, "/v1/resolver", { userIds: ["tel:+14155552671"] })).toMatchObject({
      status: 429,
      body: { code: "rate_limited" }
    })
  })

  it("refuses an empty or oversized list, a malformed id and an unknown field", async () => {
    const bearer = await bearerOf(closed, "app-1")
    const tooMany = Array.from({ length: 51 }, (_, i) => `tel:+1415555${String(i).padStart(4, "0")}`)
    for (const body of [
      { userIds: [] },
      { userIds: tooMany },
      { userIds: ["no-colon"] },
      { userIds: "" },
      { userIds: "tel:+14155552671,,test:alice" },
      { userIds: ["tel:+14155552671"], chain: "eth" }
    ]) {
      expect(await post(closed, "/v1/resolver", body, bearer)).toMatchObject({
        status: 400,
        body: { code: "invalid_request" }
      })
    }
  })

  it("answers a refusal 422 in the patch profile, so the SDK does not fetch token after token", async () => {
    expect(await post(patch, "/v1/resolver", { userIds: ["tel:+1"] }, await bearerOf(patch, "app-2"))).toMatchObject({
      status: 422,
      body: { code: "forbidden" }
    })
  })
})
