import { embeddedPorts, makeGateway } from "@walletgate/core"
import { hashClientSecret } from "@walletgate/core/auth"
import { decodeJwt, decodeProtectedHeader } from "jose"
import { afterAll, describe, expect, it } from "vitest"

const gateway = makeGateway({
  ports: embeddedPorts({
    apps: [{ clientId: "app-1", secretHash: hashClientSecret("s3cret:/+ é"), providers: [], testMode: false }]
  }),
  loggers: []
})
afterAll(() => gateway.dispose())

const token = async (body: string, headers: Record<string, string>) => {
  const response = await gateway.fetch(new Request("http://gateway.test/v1/auth", { method: "POST", headers, body }))
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>
  }
}
const json = { "content-type": "application/json" }
const form = { "content-type": "application/x-www-form-urlencoded" }
const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`

describe("POST /v1/auth (OAuth 2.0 client credentials)", () => {
  it("grants an access token for JSON credentials, as existing clients send them", async () => {
    const answer = await token(JSON.stringify({ client_id: "app-1", client_secret: "s3cret:/+ é" }), json)
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({ token_type: "bearer", expires_in: 3600 })
    expect(answer.headers.get("cache-control")).toBe("no-store")
    const claims = decodeJwt(String(answer.body.access_token))
    expect(claims).toMatchObject({ sub: "app-1", aud: "walletgate:api", iss: "walletgate", client_id: "app-1" })
    expect(decodeProtectedHeader(String(answer.body.access_token)).typ).toBe("at+jwt")
  })

  it("grants for the RFC's form encoding with grant_type, and for HTTP Basic", async () => {
    const inForm = await token(
      new URLSearchParams({
        grant_type: "client_credentials",
        client_id: "app-1",
        client_secret: "s3cret:/+ é"
      }).toString(),
      form
    )
    expect(inForm.status).toBe(200)
    const withBasic = await token("grant_type=client_credentials", {
      ...form,
      authorization: basic("app-1", "s3cret:/+ é")
    })
    expect(withBasic.status).toBe(200)
  })

  it("answers errors in the RFC's own shape", async () => {
    const cases: Array<[string, Record<string, string>, number, string]> = [
      [JSON.stringify({ client_id: "app-1", client_secret: "wrong" }), json, 401, "invalid_client"],
      [JSON.stringify({ client_id: "nobody", client_secret: "x" }), json, 401, "invalid_client"],
      [JSON.stringify({ client_id: "app-1" }), json, 401, "invalid_client"],
      [
        JSON.stringify({ grant_type: "password", client_id: "app-1", client_secret: "x" }),
        json,
        400,
        "unsupported_grant_type"
      ],
      ["client_id=app-1&client_secret=x", form, 400, "invalid_request"],
      ["[1]", json, 400, "invalid_request"]
    ]
    for (const [body, headers, status, error] of cases) {
      const answer = await token(body, headers)
      expect([answer.status, answer.body.error]).toEqual([status, error])
      expect(typeof answer.body.error_description).toBe("string")
      expect(answer.headers.get("content-type")).toBe("application/json")
    }
  })

  it("challenges with Basic when Basic credentials fail, and refuses two methods at once", async () => {
    const failed = await token("grant_type=client_credentials", { ...form, authorization: basic("app-1", "nope") })
    expect(failed.status).toBe(401)
    expect(failed.headers.get("www-authenticate")).toBe('Basic realm="walletgate"')
    const both = await token("grant_type=client_credentials&client_id=app-1&client_secret=x", {
      ...form,
      authorization: basic("app-1", "s3cret:/+ é")
    })
    expect([both.status, both.body.error]).toEqual([400, "invalid_request"])
  })
})
