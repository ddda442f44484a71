import { embeddedPorts, makeGateway } from "@walletgate/core"
import { hashClientSecret } from "@walletgate/core/auth"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

// No network is configured: every request here is refused for its shape before any chain is looked at.
const gateway = makeGateway({
  ports: embeddedPorts({
    apps: [{ clientId: "app-1", secretHash: hashClientSecret("secret-1"), providers: ["phone"], testMode: true }]
  }),
  loggers: []
})
afterAll(() => gateway.dispose())

const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await gateway.fetch(
    new Request(`http://gateway.test${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body)
    })
  )
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

describe("POST /v1/kernel/tx refuses what it would not do as asked", () => {
  let bearer: Record<string, string>
  beforeAll(async () => {
    const granted = await post("/v1/auth", { client_id: "app-1", client_secret: "secret-1" })
    bearer = { authorization: `Bearer ${String(granted.body.access_token)}` }
  })
  const batch = {
    userId: "phone:alice",
    chain: "nowhere",
    to: ["0x000000000000000000000000000000000000dEaD"],
    value: ["0"],
    data: ["0x"],
    auth: ""
  }

  it("refuses delegatecall: 1 with delegatecall_unsupported, and never runs it as a CALL", async () => {
    expect(await post("/v1/kernel/tx", { ...batch, delegatecall: 1 }, bearer)).toMatchObject({
      status: 400,
      body: { code: "delegatecall_unsupported" }
    })
  })

  it("takes delegatecall: 0 or no delegatecall as plain calls (here: to a network this gateway does not serve)", async () => {
    for (const body of [batch, { ...batch, delegatecall: 0 }]) {
      expect(await post("/v1/kernel/tx", body, bearer)).toMatchObject({
        status: 400,
        body: { code: "unsupported_chain" }
      })
    }
  })

  it("refuses a field it does not know instead of dropping it, and any other delegatecall value", async () => {
    const unknown = await post("/v1/kernel/tx", { ...batch, operation: 1 }, bearer)
    expect(unknown).toMatchObject({ status: 400, body: { code: "invalid_request" } })
    expect(JSON.stringify(unknown.body)).toContain("/operation")
    for (const delegatecall of [2, "1", true]) {
      expect(await post("/v1/kernel/tx", { ...batch, delegatecall }, bearer)).toMatchObject({
        status: 400,
        body: { code: "invalid_request" }
      })
    }
  })
})

describe("POST /v1/kernel/sign names the chain it does not serve", () => {
  it("names typed data's domain.chainId, and the chain asked, never an empty name", async () => {
    const granted = await post("/v1/auth", { client_id: "app-1", client_secret: "secret-1" })
    const bearer = { authorization: `Bearer ${String(granted.body.access_token)}` }
    const typedData = {
      domain: { name: "Mail", chainId: 424242 },
      types: { Mail: [{ name: "contents", type: "string" }] },
      primaryType: "Mail",
      message: { contents: "hi" }
    }
    const typed = await post("/v1/kernel/sign", { userId: "phone:alice", typedData, auth: "" }, bearer)
    expect(typed).toMatchObject({ status: 400, body: { code: "unsupported_chain" } })
    expect(typed.body.detail).toContain('"424242"')
    const named = await post("/v1/kernel/sign", { userId: "phone:alice", chain: "nowhere", string: "hi" }, bearer)
    expect(named.body.detail).toContain('"nowhere"')
  })
})

describe("the kernel's rules on a request's shape answer as a field problem", () => {
  let bearer: Record<string, string>
  beforeAll(async () => {
    const granted = await post("/v1/auth", { client_id: "app-1", client_secret: "secret-1" })
    bearer = { authorization: `Bearer ${String(granted.body.access_token)}` }
  })
  const refused = (path: string, message: string) => ({
    status: 400,
    body: {
      type: "urn:walletgate:problem:invalid_request",
      title: "Invalid request",
      status: 400,
      detail: "1 field is invalid.",
      code: "invalid_request",
      errors: [{ path, message }]
    }
  })

  it("POST /v1/kernel/txStatus refuses none, or more than one, of userOpHash, id and txHash", async () => {
    const hash = `0x${"ab".repeat(32)}`
    for (const body of [{}, { userOpHash: hash, txHash: hash }, { id: "x", txHash: hash }]) {
      const answer = await post("/v1/kernel/txStatus", body, bearer)
      expect(answer).toEqual(refused("", "Expected exactly one of userOpHash, id and txHash"))
    }
  })

  it("?wait must be whole seconds from 0 to 10, on /v1/kernel/tx and /v1/kernel/txStatus", async () => {
    const batch = { userId: "phone:alice", chain: "nowhere", to: [`0x${"de".repeat(20)}`], value: ["0"], data: ["0x"] }
    for (const wait of ["11", "-1", "1.5", "x", "100", "010"]) {
      for (const [path, body] of [
        ["/v1/kernel/tx", batch],
        ["/v1/kernel/txStatus", { id: "x" }]
      ] as const) {
        const answer = await post(`${path}?wait=${wait}`, body, bearer)
        expect(answer).toEqual(refused("/query/wait", "Expected whole seconds from 0 to 10"))
      }
    }
    // Within the bounds (and an empty value, which is none) the request goes on, to the chain it names.
    for (const wait of ["", "0", "10", "07"]) {
      expect(await post(`/v1/kernel/tx?wait=${wait}`, batch, bearer)).toMatchObject({
        status: 400,
        body: { code: "unsupported_chain" }
      })
    }
  })
})
