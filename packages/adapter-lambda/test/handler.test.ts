import { STATUS_CODES } from "node:http"
import type { GatewayRequest } from "@walletgate/core"
import type { ResponseHeaders } from "@walletgate/core/adapter"
import { internalErrorDocument } from "@walletgate/core/adapter"
import { type EchoGateway, echoGateway } from "@walletgate/core/testing"
import { createHandler, type LambdaHandlerOptions, type LambdaHttpEvent } from "@walletgate/lambda"
import type { ALBHandler, APIGatewayProxyHandler, APIGatewayProxyHandlerV2, LambdaFunctionURLHandler } from "aws-lambda"
import { describe, expect, it } from "vitest"
import { fixture } from "./events"

const CONTEXT = { awsRequestId: "8476a536-e9f4-11e8-9739-2dfe598c3fcd" }
const SET_COOKIE = "session=xyz; Expires=Wed, 21 Oct 2026 07:28:00 GMT; Path=/; HttpOnly; Secure"

/** Any value as an event: the handler accepts any value at run time. */
const asEvent = (event: unknown) => event as LambdaHttpEvent

/** Runs `event` through a handler over `gateway`. */
const run = (event: unknown, gateway: EchoGateway = echoGateway(), options?: LambdaHandlerOptions) =>
  createHandler(gateway, options)(asEvent(event), CONTEXT)

/** The one request the gateway received for `event`. */
const translate = async (event: unknown, options?: LambdaHandlerOptions, bodyLimit?: number) => {
  const gateway = echoGateway(bodyLimit)
  await run(event, gateway, options)
  expect(gateway.received).toHaveLength(1)
  const [request] = gateway.received
  if (request === undefined) throw new Error("unreachable: the length was checked")
  return request
}

/** A gateway that answers every request with `headers` and status 200. */
const answering = (headers: ResponseHeaders, status = 200): EchoGateway => {
  const gateway = echoGateway()
  gateway.respondWith({ status, headers, body: '{"ok":true}' })
  return gateway
}

const utf8 = (text: string) => new TextEncoder().encode(text)
const TX_BODY = '{"to":"0x00000000000000000000000000000000000000b0"}'

describe("API Gateway REST API (payload 1.0)", () => {
  it("passes method, path, query, lower-case headers and the source IP through", async () => {
    const request = await translate(fixture("rest-v1"))

    expect(request.method).toBe("GET")
    // API Gateway removed the stage from `path` itself (it is only in requestContext.path).
    expect(request.path).toBe("/v1/orders")
    expect([...request.query]).toEqual([
      ["network", "base"],
      ["owner", "0xAbC0000000000000000000000000000000000001"]
    ])
    expect(request.headers.accept).toBe("application/json")
    expect(request.headers["x-forwarded-for"]).toBe("198.51.100.7, 203.0.113.10")
    expect(request.headers.Accept).toBeUndefined()
    expect(request.remoteAddress).toBe("203.0.113.10")
    expect(request.body).toBeUndefined()
    expect(request.rawBody).toBeUndefined()
  })

  it("prefers the multi-value headers and query, and decodes a base64 body to bytes", async () => {
    const request = await translate(fixture("rest-v1-multivalue-base64"))

    expect(request.method).toBe("POST")
    expect(request.headers["x-tag"]).toBe("first, second")
    expect(request.headers.cookie).toBe("session=abc; theme=dark")
    expect(request.query.getAll("tag")).toEqual(["a", "b"])
    expect(request.query.get("q")).toBe("a b")
    expect(request.rawBody).toEqual(utf8('{"to":"0x00000000000000000000000000000000000000b0","note":"café ✓"}'))
  })

  it("falls back to the single-value fields when the multi-value ones are absent", async () => {
    const event = fixture("rest-v1-multivalue-base64")
    delete event.multiValueHeaders
    delete event.multiValueQueryStringParameters

    const request = await translate(event)

    expect(request.headers["x-tag"]).toBe("second")
    expect(request.query.getAll("tag")).toEqual(["b"])
  })

  it("hands the path over whole: a custom domain's base path is the gateway's to remove", async () => {
    expect((await translate(fixture("rest-v1-custom-domain"))).path).toBe("/wallet/v1/kernel/tx")
  })

  it("keeps a first segment that happens to be the stage's name", async () => {
    const event = fixture("rest-v1")
    event.requestContext = { ...(event.requestContext as object), stage: "v1", path: "/v1/v1/orders" }

    expect((await translate(event)).path).toBe("/v1/orders")
  })

  it("answers with headers, and several Set-Cookie values whole in multiValueHeaders", async () => {
    const result = await run(
      fixture("rest-v1"),
      answering(
        { "content-type": "application/json", "set-cookie": [SET_COOKIE, "theme=dark"], "x-request-id": "r1" },
        201
      )
    )

    expect(result).toEqual({
      statusCode: 201,
      headers: { "content-type": "application/json", "x-request-id": "r1" },
      multiValueHeaders: { "set-cookie": [SET_COOKIE, "theme=dark"] },
      body: '{"ok":true}',
      isBase64Encoded: false
    })
  })

  it("answers without multiValueHeaders when there is no cookie to set", async () => {
    const result = await run(fixture("rest-v1"), answering({ "content-type": "application/json" }))

    expect(result).toEqual({
      statusCode: 200,
      headers: { "content-type": "application/json" },
      body: '{"ok":true}',
      isBase64Encoded: false
    })
  })
})

describe("API Gateway HTTP API (payload 2.0)", () => {
  it("passes method, rawPath, rawQueryString, headers and the source IP through", async () => {
    const request = await translate(fixture("http-api-v2"))

    expect(request.method).toBe("GET")
    expect(request.path).toBe("/v1/orders")
    // From rawQueryString: the repeated key stays two values, not queryStringParameters' "a,b".
    expect(request.query.getAll("tag")).toEqual(["a", "b"])
    expect(request.query.get("q")).toBe("café au lait")
    expect(request.headers.host).toBe("f9e8d7c6b5.execute-api.us-east-1.amazonaws.com")
    expect(request.headers.cookie).toBeUndefined()
    expect(request.remoteAddress).toBe("203.0.113.10")
    expect(request.rawBody).toBeUndefined()
  })

  it("removes a named stage from rawPath and joins cookies into one Cookie header", async () => {
    const request = await translate(fixture("http-api-v2-stage-cookies"))

    expect(request.method).toBe("POST")
    expect(request.path).toBe("/v1/kernel/tx")
    expect(request.headers.cookie).toBe("session=abc; theme=dark")
    expect(request.rawBody).toEqual(utf8(TX_BODY))
  })

  it("removes the stage once, and leaves the base path to the gateway", async () => {
    const event = fixture("http-api-v2-stage-cookies")
    event.requestContext = { ...(event.requestContext as object), stage: "v1" }

    expect((await translate({ ...event, rawPath: "/v1/v1/orders" })).path).toBe("/v1/orders")
    expect((await translate({ ...event, rawPath: "/v1" })).path).toBe("/")
    expect((await translate({ ...event, rawPath: "/v1/wallet/v1/orders" })).path).toBe("/wallet/v1/orders")
  })

  it("percent-encodes what API Gateway decoded in the path, and only that", async () => {
    const event = fixture("http-api-v2")

    expect((await translate({ ...event, rawPath: "/v1/a b/é" })).path).toBe("/v1/a%20b/%C3%A9")
    expect((await translate({ ...event, rawPath: "/v1/a%20b/100%" })).path).toBe("/v1/a%20b/100%25")
  })

  it("answers Set-Cookie in cookies, whole, and the other headers in headers", async () => {
    const result = await run(
      fixture("http-api-v2"),
      answering({ "content-type": "application/json", "set-cookie": SET_COOKIE })
    )

    expect(result).toEqual({
      statusCode: 200,
      headers: { "content-type": "application/json" },
      cookies: [SET_COOKIE],
      body: '{"ok":true}',
      isBase64Encoded: false
    })
  })
})

describe("Lambda function URL (payload 2.0)", () => {
  it("is read as an HTTP API event", async () => {
    const request = await translate(fixture("function-url"))

    expect(request.method).toBe("POST")
    expect(request.path).toBe("/v1/kernel/tx")
    expect(request.query.get("dryRun")).toBe("true")
    expect(request.headers.cookie).toBe("session=abc")
    expect(request.headers["content-type"]).toBe("application/json")
    expect(request.remoteAddress).toBe("203.0.113.10")
    expect(request.rawBody).toEqual(utf8(TX_BODY))
  })

  it("answers in the payload 2.0 shape", async () => {
    const result = await run(
      fixture("function-url"),
      answering({ "content-type": "application/json", "set-cookie": SET_COOKIE })
    )

    expect(result).toEqual({
      statusCode: 200,
      headers: { "content-type": "application/json" },
      cookies: [SET_COOKIE],
      body: '{"ok":true}',
      isBase64Encoded: false
    })
  })
})

describe("Application Load Balancer", () => {
  it("decodes the query exactly once, as ALB passes it still encoded", async () => {
    const request = await translate(fixture("alb"))

    expect(request.method).toBe("GET")
    expect(request.path).toBe("/v1/orders")
    expect(request.query.get("email")).toBe("me@example.com")
    expect(request.query.get("raw")).toBe("%41")
    expect(request.query.get("q")).toBe("a b")
    expect(request.headers.host).toBe("walletgate-123578498.us-east-1.elb.amazonaws.com")
    expect(request.rawBody).toBeUndefined()
  })

  it("trusts X-Forwarded-For only when told to, and then its right-most entry", async () => {
    expect((await translate(fixture("alb"))).remoteAddress).toBeUndefined()
    expect((await translate(fixture("alb"), { trustProxy: true })).remoteAddress).toBe("203.0.113.10")
    expect((await translate(fixture("alb-multivalue"), { trustProxy: true })).remoteAddress).toBe("203.0.113.10")
  })

  it("answers with statusDescription and single-value headers", async () => {
    const result = await run(
      fixture("alb"),
      answering({ "content-type": "application/problem+json", "set-cookie": SET_COOKIE }, 404)
    )

    expect(result).toEqual({
      statusCode: 404,
      statusDescription: "404 Not Found",
      headers: { "content-type": "application/problem+json", "set-cookie": SET_COOKIE },
      body: '{"ok":true}',
      isBase64Encoded: false
    })
  })

  it("describes every status with Node's reason phrase", async () => {
    for (const [status, phrase] of Object.entries(STATUS_CODES)) {
      // A gateway answers no 1xx.
      if (Number(status) < 200) continue
      const result = await run(fixture("alb"), answering({}, Number(status)))
      expect(result).toMatchObject({ statusDescription: `${status} ${phrase}` })
    }
  })

  it("reads repeated values in multi-value mode", async () => {
    const request = await translate(fixture("alb-multivalue"))

    expect(request.method).toBe("POST")
    expect(request.query.getAll("tag")).toEqual(["a", "b c"])
    expect(request.query.get("raw")).toBe("%41")
    expect(request.headers.cookie).toBe("session=abc; theme=dark")
    expect(request.rawBody).toEqual(utf8(TX_BODY))
  })

  it("answers in multi-value mode with multiValueHeaders only", async () => {
    const result = await run(
      fixture("alb-multivalue"),
      answering({ "content-type": "application/json", "set-cookie": SET_COOKIE })
    )

    expect(result).toEqual({
      statusCode: 200,
      statusDescription: "200 OK",
      multiValueHeaders: { "content-type": ["application/json"], "set-cookie": [SET_COOKIE] },
      body: '{"ok":true}',
      isBase64Encoded: false
    })
  })
})

describe("bodies", () => {
  const withBody = ["rest-v1-multivalue-base64", "http-api-v2-stage-cookies", "function-url", "alb-multivalue"]
  const binary = Uint8Array.of(0xff, 0x00, 0xfe, 0x80, 0xc3)

  it.each(withBody)("%s: decodes a base64 body to its bytes, never through text", async (name) => {
    const event = { ...fixture(name), body: Buffer.from(binary).toString("base64"), isBase64Encoded: true }

    expect((await translate(event)).rawBody).toEqual(binary)
  })

  it.each(withBody)("%s: passes at most limit + 1 bytes of an oversized body", async (name) => {
    const text = await translate({ ...fixture(name), body: "x".repeat(100), isBase64Encoded: false }, {}, 8)
    const base64 = await translate(
      { ...fixture(name), body: Buffer.from("y".repeat(100)).toString("base64"), isBase64Encoded: true },
      {},
      8
    )

    expect(text.rawBody).toEqual(utf8("x".repeat(9)))
    expect(base64.rawBody).toEqual(utf8("y".repeat(9)))
  })

  it("gives the body a buffer of its own", async () => {
    const { rawBody } = await translate(fixture("function-url"))

    expect(rawBody?.buffer.byteLength).toBe(utf8(TX_BODY).byteLength)
  })

  it.each([
    ["rest-v1", null],
    ["http-api-v2", undefined],
    ["alb", ""]
  ])("%s: passes no body for %j", async (name, body) => {
    const event = fixture(name)
    expect(event.body).toBe(body)

    expect((await translate(event)).rawBody).toBeUndefined()
  })
})

describe("events it cannot answer", () => {
  const unsupported = (detail: string) => ({
    statusCode: 400,
    headers: {
      "cache-control": "no-store",
      "content-type": "application/problem+json",
      "x-content-type-options": "nosniff",
      "x-request-id": CONTEXT.awsRequestId
    },
    body: JSON.stringify({
      type: "urn:walletgate:problem:unsupported_event",
      title: "Unsupported event",
      status: 400,
      detail,
      code: "unsupported_event"
    }),
    isBase64Encoded: false
  })
  const UNKNOWN =
    "The event is not an HTTP request from API Gateway (REST or HTTP API), an Application Load Balancer or a function URL."

  it("answers an event of another kind with a 400 problem, without calling the gateway", async () => {
    const gateway = echoGateway()

    expect(await run(fixture("unknown"), gateway)).toEqual(unsupported(UNKNOWN))
    expect(gateway.received).toHaveLength(0)
  })

  it.each([
    ["null", null],
    ["a string", "GET /"],
    ["an array", [fixture("rest-v1")]],
    ["an empty object", {}],
    ["no requestContext", { httpMethod: "GET", path: "/" }],
    ["a WebSocket message", { requestContext: { eventType: "MESSAGE", routeKey: "$default" }, body: "{}" }],
    ["payload 2.0 without rawPath", { version: "2.0", requestContext: { http: { method: "GET" } } }]
  ])("answers %s with a 400 problem", async (_, event) => {
    expect(await run(event)).toEqual(unsupported(UNKNOWN))
  })

  it("answers an event whose fields have the wrong types with a 400 problem in the event's shape", async () => {
    const result = await run({ ...fixture("alb"), body: 42 })

    expect(result.statusCode).toBe(400)
    expect(result.statusDescription).toBe("400 Bad Request")
    expect(JSON.parse(result.body).detail).toBe("The event's fields do not have the types AWS documents for its kind.")
  })

  it("answers 500 internal_error in the event's shape if the gateway ever rejects", async () => {
    const gateway = echoGateway()
    const failing = { ...gateway, handle: (_: GatewayRequest) => Promise.reject(new Error("boom")) }

    const result = await run(fixture("alb-multivalue"), failing)

    expect(result).toEqual({
      statusCode: 500,
      statusDescription: "500 Internal Server Error",
      multiValueHeaders: {
        "cache-control": ["no-store"],
        "x-content-type-options": ["nosniff"],
        "x-request-id": [CONTEXT.awsRequestId],
        "content-type": ["application/problem+json"]
      },
      body: JSON.stringify(internalErrorDocument),
      isBase64Encoded: false
    })
    expect(result.body).not.toContain("boom")
  })

  it("makes up a request id when there is no Lambda context", async () => {
    const result = await createHandler(echoGateway())(asEvent(fixture("unknown")))

    expect(result.headers?.["x-request-id"]).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
    )
  })
})

describe("createHandler", () => {
  it("fits the handler types of @types/aws-lambda", () => {
    const handler = createHandler(echoGateway())
    // Checked by the compiler: each assignment fails to type-check if the shapes drift apart.
    const handlers: [APIGatewayProxyHandler, APIGatewayProxyHandlerV2, ALBHandler, LambdaFunctionURLHandler] = [
      handler,
      handler,
      handler,
      handler
    ]

    expect(handlers).toHaveLength(4)
  })
})
