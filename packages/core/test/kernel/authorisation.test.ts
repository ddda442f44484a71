import type { ExternalIssuerConfig } from "@walletgate/core"
import { hashClientSecret } from "@walletgate/core/auth"
import { generateKeyPair } from "jose"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshAddress, OTHER_PHONE, startKernelFixture, TEST_PHONE } from "./fixture"
import { type Issuer, startIssuer } from "./issuer"

type Fixture = Awaited<ReturnType<typeof startKernelFixture>>

/** The registration of `issuer` as the provider `name`. */
const registered = (
  name: string,
  issuer: Issuer,
  extra: Pick<ExternalIssuerConfig, "subjectClaim" | "canonical"> = {}
) => ({
  name,
  jwksUrl: issuer.jwksUrl,
  issuer: issuer.issuer,
  audience: issuer.audience,
  algorithms: ["RS256" as const],
  ...extra
})

describe("kernel authorisation", () => {
  let f: Fixture
  let issuer: Issuer
  let bearer: Record<string, string>
  const tx = (userId: string, auth: string, chain = "anvil") => ({
    userId,
    chain,
    to: [freshAddress()],
    value: ["0"],
    data: ["0x"],
    auth
  })
  const send = (body: unknown, headers = bearer) => f.call("POST", "/v1/kernel/tx", body, headers)

  beforeAll(async () => {
    issuer = await startIssuer()
    f = await startKernelFixture({
      identityProviders: [
        registered("ext", issuer),
        registered("ext-uid", issuer, { subjectClaim: "uid" }),
        registered("mail", issuer, { canonical: { case: "lower" } })
      ],
      grants: ["ext", "ext-uid", "mail", "tel"],
      apps: [{ clientId: "wgc_live", secretHash: hashClientSecret("wgs_live"), providers: ["phone"], testMode: false }]
    })
    bearer = { authorization: `Bearer ${await f.accessToken()}` }
  })
  afterAll(async () => {
    await f.stop()
    await issuer.stop()
  })

  it("requires a Bearer access token", async () => {
    for (const headers of [{}, { authorization: "Bearer nope" }, { authorization: "Basic abc" }]) {
      const answer = await send(tx("phone:x", ""), headers)
      expect(answer.status).toBe(401)
      expect(answer.body.code).toBe("invalid_token")
      expect(answer.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"')
    }
  })

  it("does not take a user JWT as an access token", async () => {
    const user = await f.phoneUser()
    const answer = await send(tx(user.userId, user.jwt), { authorization: `Bearer ${user.jwt}` })
    expect(answer.status).toBe(401)
    expect(answer.body.code).toBe("invalid_token")
  })

  it("does not take an access token as the user's auth", async () => {
    const user = await f.phoneUser()
    const answer = await send(tx(user.userId, String(bearer.authorization).slice(7)))
    expect(answer.status).toBe(401)
    expect(answer.body.code).toBe("invalid_auth")
  })

  it("accepts the native phone JWT of the user, and refuses another user's", async () => {
    const user = await f.phoneUser()
    const other = await f.phoneUser(OTHER_PHONE)
    expect((await send(tx(user.userId, user.jwt))).status).toBe(200)
    const answer = await send(tx(user.userId, other.jwt))
    expect(answer.status).toBe(403)
    expect(answer.body.code).toBe("forbidden")
  })

  it("refuses a provider the app may not use", async () => {
    const answer = await send(tx("google:12345", "x"))
    expect(answer.status).toBe(403)
    expect(answer.body.code).toBe("forbidden")
  })

  it("accepts an external provider's token for its subject only", async () => {
    expect((await send(tx("ext:user-42", await issuer.sign("user-42")))).status).toBe(200)
    const other = await send(tx("ext:user-42", await issuer.sign("user-43")))
    expect(other.status).toBe(403)
  })

  it("sends from the address the resolver names for the id, whichever spelling of it tx was given", async () => {
    const addressOf = async (userId: string) => {
      const answer = await f.call("POST", "/v1/resolver", { userIds: [userId] }, bearer)
      return (answer.body.users as ReadonlyArray<{ readonly accountAddress: string }>)[0]?.accountAddress
    }
    const user = await f.phoneUser(TEST_PHONE)
    const byNumber = await send(tx("tel:+1-500-555-0006", user.jwt))
    expect(byNumber).toMatchObject({ status: 200, body: { userId: "tel:+15005550006" } })
    expect(byNumber.body.account).toBe(await addressOf("tel:+15005550006"))
    expect(byNumber.body.account).toBe(await addressOf("tel:+1(500)555.0006"))
    // The provider declares its ids lower-case: the token's subject and the id meet in that form.
    const byMail = await send(tx("mail:Alice@Example.com", await issuer.sign("ALICE@example.COM")))
    expect(byMail).toMatchObject({ status: 200, body: { userId: "mail:alice@example.com" } })
    expect(byMail.body.account).toBe(await addressOf("mail:alice@example.com"))
    // A spelling with no canonical form names no wallet, in tx as in the resolver.
    expect(await send(tx("tel:15005550006", user.jwt))).toMatchObject({
      status: 400,
      body: { code: "non_canonical_user_id" }
    })
    // Spelt with spaces, the number is refused naming its E.164 form, in tx and sign alike; no other id holds a space.
    const hash = `0x${"ab".repeat(32)}`
    for (const userId of ["tel:+1 (500) 555-0006", "tel:+1 500 555 0006"]) {
      for (const answer of [
        await send(tx(userId, user.jwt)),
        await f.call("POST", "/v1/kernel/sign", { userId, chain: "anvil", hash, auth: user.jwt }, bearer)
      ]) {
        expect(answer, userId).toMatchObject({ status: 400, body: { code: "non_canonical_user_id" } })
        expect(String(answer.body.detail), userId).toContain('"tel:+15005550006"')
      }
    }
    expect(await send(tx("ext:user 42", await issuer.sign("user 42")))).toMatchObject({
      status: 400,
      body: { code: "non_canonical_user_id" }
    })
  })

  it("reads the user's id from the claim the provider is registered with", async () => {
    const token = (claims?: Record<string, unknown>) => issuer.sign("sub-1", claims === undefined ? {} : { claims })
    expect((await send(tx("ext-uid:u-9", await token({ uid: "u-9" })))).status).toBe(200)
    // The sub is not the id for this provider, and a missing or non-string claim is no id at all.
    expect((await send(tx("ext-uid:sub-1", await token({ uid: "u-9" })))).status).toBe(403)
    for (const claims of [undefined, { uid: 9 }, { uid: "" }]) {
      const answer = await send(tx("ext-uid:u-9", await token(claims)))
      expect(answer.status).toBe(401)
      expect(answer.body.code).toBe("invalid_auth")
    }
  })

  it("refuses a token of another provider", async () => {
    const user = await f.phoneUser()
    // A phone JWT presented for the external provider, and an external token for the phone provider.
    expect((await send(tx(`ext:${user.userId.slice(6)}`, user.jwt))).body.code).toBe("invalid_auth")
    expect((await send(tx(user.userId, await issuer.sign(user.userId.slice(6))))).body.code).toBe("invalid_auth")
  })

  it("refuses expired tokens, other algorithms, other keys and other issuers", async () => {
    const { privateKey: stranger } = await generateKeyPair("RS256")
    const { privateKey: ecKey } = await generateKeyPair("ES256")
    const tokens = [
      await issuer.sign("user-42", { expiresIn: Math.floor(Date.now() / 1000) - 120 }),
      await issuer.sign("user-42", { key: stranger }),
      await issuer.sign("user-42", { key: ecKey, alg: "ES256" }),
      await issuer.sign("user-42", { issuer: "https://evil.example.com" }),
      "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ1c2VyLTQyIn0."
    ]
    for (const token of tokens) {
      const answer = await send(tx("ext:user-42", token))
      expect(answer.status).toBe(401)
      expect(answer.body.code).toBe("invalid_auth")
    }
  })

  it("answers 503 when the external key set cannot be fetched", async () => {
    const fresh = await startKernelFixture({
      identityProviders: [
        { name: "down", jwksUrl: "http://127.0.0.1:9/jwks.json", issuer: "x", audience: "y", algorithms: ["RS256"] }
      ],
      grants: ["down"]
    })
    try {
      const answer = await fresh.call("POST", "/v1/kernel/tx", tx("down:u1", await issuer.sign("u1")), {
        authorization: `Bearer ${await fresh.accessToken()}`
      })
      expect(answer.status).toBe(503)
      expect(answer.body.code).toBe("identity_provider_unavailable")
    } finally {
      await fresh.stop()
    }
  })

  it("accepts blank auth only from a test-mode app on a test network", async () => {
    expect((await send(tx("phone:someone", ""))).status).toBe(200)
    const live = await send(tx("phone:someone", "", "live"))
    expect(live.status).toBe(401)
    expect(live.body.code).toBe("invalid_auth")
    const liveApp = {
      authorization: `Bearer ${await f.accessToken({ clientId: "wgc_live", clientSecret: "wgs_live" })}`
    }
    const notTestMode = await send(tx("phone:someone", ""), liveApp)
    expect(notTestMode.status).toBe(401)
    expect(notTestMode.body.code).toBe("invalid_auth")
  })

  it("names every invalid field and index", async () => {
    const answer = await send({
      userId: "no-provider",
      chain: "anvil",
      to: ["0x52908400098527886E0F7030069857D2E4169EE7", "0x8617E340B3D01FA5F11F306F4090FD50E238070d", "0x12"],
      value: ["1", "-1", "115792089237316195423570985008687907853269984665640564039457584007913129639936"],
      data: ["0x", "abc", "0xzz"]
    })
    expect(answer.status).toBe(400)
    expect((answer.body.errors as Array<{ path: string }>).map((error) => error.path)).toEqual([
      "/userId",
      "/to/1",
      "/to/2",
      "/value/1",
      "/value/2",
      "/data/1",
      "/data/2"
    ])
  })

  it("checks the arrays are parallel and within the batch limit", async () => {
    const mismatch = await send({ ...tx("phone:x", ""), value: ["1", "2"] })
    expect(mismatch.body.errors).toEqual([{ path: "/value", message: "Expected 1 items, as in to" }])
    const many = Array.from({ length: 17 }, () => freshAddress())
    const tooMany = await send({
      ...tx("phone:x", ""),
      to: many,
      value: many.map(() => "0"),
      data: many.map(() => "0x")
    })
    expect(tooMany.body.errors).toEqual([{ path: "/to", message: "Expected at most 16 calls" }])
    const empty = await send({ ...tx("phone:x", ""), to: [], value: [], data: [] })
    expect(empty.body.errors).toEqual([{ path: "/to", message: "Expected at least 1 call" }])
  })

  it("refuses chains it does not serve", async () => {
    for (const chain of ["mainnet", "1", "31338"]) {
      const answer = await send(tx("phone:x", "", chain))
      expect(answer.status).toBe(400)
      expect(answer.body.code).toBe("unsupported_chain")
    }
    // A chain id works as well as the slug.
    expect((await send(tx("phone:x", "", String(f.local.network.chainId)))).status).toBe(200)
  })

  it("shows a transaction only to the app that sent it", async () => {
    const sent = await send(tx("phone:x", ""))
    const liveApp = {
      authorization: `Bearer ${await f.accessToken({ clientId: "wgc_live", clientSecret: "wgs_live" })}`
    }
    const other = await f.call("GET", `/v1/kernel/tx/${String(sent.body.id)}`, undefined, liveApp)
    expect(other.status).toBe(404)
    expect(other.body.code).toBe("tx_not_found")
    expect((await f.call("GET", `/v1/kernel/tx/${String(sent.body.id)}`, undefined, bearer)).status).toBe(200)
  })
})
