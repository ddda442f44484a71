import { type ExternalIssuerConfig, embeddedPorts, makeGateway } from "@walletgate/core"
import { hashClientSecret } from "@walletgate/core/auth"
import { afterAll, describe, expect, it } from "vitest"

// Resolving reads no chain: the address of a wallet is a function of its identity and the deployment's secret.
const apps = [
  {
    clientId: "app-1",
    secretHash: hashClientSecret("secret-1"),
    providers: ["phone", "tel", "email", "handle"],
    testMode: true
  },
  { clientId: "app-2", secretHash: hashClientSecret("secret-2"), providers: ["phone"], testMode: false }
]
const MASTER = "resolver-test-master-secret-0123456789abcdef"
type Gateway = ReturnType<typeof makeGateway>
/** An external provider registered with `canonical`; the resolver never fetches its keys. */
const provider = (name: string, canonical: ExternalIssuerConfig["canonical"]): ExternalIssuerConfig => ({
  name,
  issuer: `https://${name}.example`,
  audience: "walletgate",
  jwksUrl: `https://${name}.example/jwks.json`,
  algorithms: ["RS256"],
  ...(canonical === undefined ? {} : { canonical })
})
const identityProviders = [provider("email", { case: "lower", unicode: "NFKC" }), provider("handle", undefined)]
const TEST_PHONE = "+15005550006"
const gatewayWith = (kernel: Parameters<typeof makeGateway>[0] extends infer O ? O : never) =>
  makeGateway({
    ports: embeddedPorts({
      apps,
      masterSecret: MASTER,
      identityProviders,
      otp: { testPhones: { [TEST_PHONE]: "123456" } }
    }),
    loggers: [],
    ...kernel
  })
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
    const ids = ["tel:+14155552671", "phone:5c0f3b2a-9d4e-4f6a-8b1c-2d3e4f5a6b7c", "tel:+14155552672", "test:alice"]
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

  describe("one identity, one address (canonical identities)", () => {
    const resolve = async (userId: string) =>
      post(closed, "/v1/resolver", { userIds: [userId] }, await bearerOf(closed, "app-1"))
    const addressOf = async (userId: string) => {
      const answer = await resolve(userId)
      expect(answer.status, userId).toBe(200)
      return (answer.body.users as Users)[0]?.accountAddress
    }

    it("gives every spelling of one number one address, or a 400 naming tel:+15005550006, never another address", async () => {
      const spellings = [
        "tel:+15005550006",
        "tel:15005550006",
        "tel:+1 (500) 555-0006",
        "tel:+1 500 555 0006",
        "tel: +15005550006",
        "tel:+15005550006\u200b",
        "tel:\uff0b15005550006",
        "tel:+1-500-555-0006",
        "tel:+1(500)555.0006",
        "tel:\u202e+15005550006",
        "tel:+\uff115005550006",
        "tel:5005550006"
      ]
      const addresses = new Set<string>()
      for (const userId of spellings) {
        const answer = await resolve(userId)
        if (answer.status === 200) {
          addresses.add(String((answer.body.users as Users)[0]?.accountAddress))
          continue
        }
        expect(answer.status, userId).toBe(400)
        expect(answer.body, userId).toMatchObject({ code: "non_canonical_user_id" })
        expect(String(answer.body.detail), userId).toContain('"tel:+15005550006"')
      }
      expect(addresses).toEqual(new Set([await addressOf("tel:+15005550006")]))
    })

    it("names no wallet for a number phone sign-in refuses", async () => {
      // Toll-free, fictional 555-01XX, personal 500 (not a test number here), N11, another +1 country (Jamaica).
      for (const userId of [
        "tel:+18005550199",
        "tel:+12025550123",
        "tel:+15005550007",
        "tel:+12024115555",
        "tel:+18765550123"
      ]) {
        expect(await resolve(userId), userId).toMatchObject({ status: 400, body: { code: "non_canonical_user_id" } })
      }
    })

    it("folds the case of a walletgate user id, and refuses a phone: id that is not one", async () => {
      const id = "5c0f3b2a-9d4e-4f6a-8b1c-2d3e4f5a6b7c"
      expect(await addressOf(`phone:${id.toUpperCase()}`)).toBe(await addressOf(`phone:${id}`))
      expect(await resolve("phone:someone")).toMatchObject({ status: 400, body: { code: "non_canonical_user_id" } })
    })

    it("applies each provider's declared case and Unicode rules, and refuses invisible characters", async () => {
      const email = await addressOf("email:alice@example.com")
      for (const variant of ["email:Alice@Example.com", "email:ALICE@EXAMPLE.COM", "email:\uff41lice@example.com"]) {
        expect(await addressOf(variant), variant).toBe(email)
      }
      // `handle` declares nothing: case is kept (OIDC's sub is case-sensitive), Unicode is NFC.
      expect(await addressOf("handle:Alice")).not.toBe(await addressOf("handle:alice"))
      expect(await addressOf("handle:e\u0301")).toBe(await addressOf("handle:\u00e9"))
      // White space is no part of these ids either: refused by the same rule, not taken as another id.
      for (const userId of [
        "email:alice@example.com\u200b",
        "handle:\u202ealice",
        "email:al\u00adice@example.com",
        "email:alice @example.com",
        "handle:al ice",
        "handle:alice\u00a0",
        "phone:5c0f3b2a-9d4e-4f6a-8b1c-2d3e4f5a6b7c "
      ]) {
        expect(await resolve(userId), userId).toMatchObject({ status: 400, body: { code: "non_canonical_user_id" } })
      }
    })
  })
})
