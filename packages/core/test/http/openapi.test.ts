import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { validate } from "@readme/openapi-parser"
import {
  appAuth,
  composeGateway,
  embeddedPorts,
  embeddedSignInPorts,
  type Gateway,
  kernelTx,
  payouts,
  phoneSignIn,
  pipeline,
  sweeper
} from "@walletgate/core"
import openapiTS, { astToString } from "openapi-typescript"
import ts from "typescript"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

type Json = Record<string, unknown>
interface Operation {
  readonly responses: Record<string, { content?: Record<string, { schema: Json }> }>
  readonly security: ReadonlyArray<Json>
}

/** Serves `gateway` over real HTTP on a random port of 127.0.0.1, through its web-standard `fetch`. */
const serve = async (gateway: Gateway): Promise<{ readonly url: string; readonly server: Server }> => {
  const server = createServer(async (incoming, outgoing) => {
    const chunks: Array<Buffer> = []
    for await (const chunk of incoming) chunks.push(chunk as Buffer)
    const method = incoming.method ?? "GET"
    const response = await gateway.fetch(
      new Request(`http://127.0.0.1${incoming.url ?? "/"}`, {
        method,
        headers: incoming.headers as Record<string, string>,
        ...(method === "GET" || method === "HEAD" ? {} : { body: Buffer.concat(chunks) })
      })
    )
    outgoing.writeHead(response.status, Object.fromEntries(response.headers))
    outgoing.end(Buffer.from(await response.arrayBuffer()))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }
}

const standardModules = () => [phoneSignIn(), appAuth(), pipeline(), kernelTx(), payouts(), sweeper()] as const

const openApiPath = (path: string) => path.replaceAll(/:([A-Za-z0-9_]+)/g, "{$1}")

/** The problem codes an operation documents under `status`. */
const documentedCodes = (operation: Operation, status: number): ReadonlyArray<string> => {
  const schema = operation.responses[String(status)]?.content?.["application/problem+json"]?.schema
  const code = (schema?.properties as Record<string, Json> | undefined)?.code
  return (code?.enum as ReadonlyArray<string> | undefined) ?? (code?.const === undefined ? [] : [String(code.const)])
}

describe("GET /openapi.json of the standard gateway", () => {
  let gateway: Gateway
  let served: { readonly url: string; readonly server: Server }
  let document: Json
  const operation = (method: string, path: string) =>
    (document.paths as Record<string, Record<string, Operation>>)[path]?.[method] as Operation

  beforeAll(async () => {
    gateway = composeGateway({ modules: standardModules(), ports: embeddedPorts(), loggers: [] })
    served = await serve(gateway)
    const response = await fetch(`${served.url}/openapi.json`)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toMatch(/^application\/json/)
    document = (await response.json()) as Json
  })

  afterAll(async () => {
    served.server.close()
    await gateway.dispose()
  })

  it("is a valid OpenAPI 3.1 document", async () => {
    expect(document.openapi).toMatch(/^3\.1\./)
    const result = await validate(structuredClone(document) as never)
    expect(result.valid ? [] : result.errors).toEqual([])
  })

  it("the validator refuses a broken document (the check can fail)", async () => {
    const broken = structuredClone(document) as { paths: Record<string, Record<string, Json>> }
    const parameters = broken.paths["/v1/kernel/tx/{id}"]?.get?.parameters as Array<Json>
    parameters[0] = { ...parameters[0], in: "body" }
    expect((await validate(broken as never)).valid).toBe(false)
  })

  it("documents every route of every module, the gateway's own included", () => {
    const paths = document.paths as Record<string, Record<string, unknown>>
    const routes = [
      ...standardModules().flatMap((module) => module.routes),
      { method: "GET", path: "/v1/health" },
      { method: "GET", path: "/v1/operator/metrics" },
      { method: "GET", path: "/openapi.json" }
    ]
    expect(routes.length).toBeGreaterThan(10)
    const missing = routes.filter((route) => paths[openApiPath(route.path)]?.[route.method.toLowerCase()] === undefined)
    expect(missing).toEqual([])
    const documented = Object.values(paths).reduce((count, methods) => count + Object.keys(methods).length, 0)
    expect(documented).toBe(routes.length)
  })

  it("lists every problem code of each module's slice on each of its routes, with its status", () => {
    for (const module of standardModules()) {
      for (const route of module.routes) {
        const op = operation(route.method.toLowerCase(), openApiPath(route.path))
        for (const mapping of Object.values(module.problems)) {
          expect({ route: route.path, codes: documentedCodes(op, mapping.status) }).toEqual({
            route: route.path,
            codes: expect.arrayContaining([mapping.code])
          })
        }
        // The transport's and state's are common to every route.
        expect(documentedCodes(op, 404)).toContain("not_found")
        expect(documentedCodes(op, 503)).toContain("store_unavailable")
      }
    }
    // Idempotency's only where the route takes an Idempotency-Key.
    expect(documentedCodes(operation("post", "/v1/kernel/tx"), 422)).toContain("idempotency_key_reused")
    expect(documentedCodes(operation("get", "/v1/kernel/tx/{id}"), 422)).not.toContain("idempotency_key_reused")
  })

  it("declares Bearer for apps, X-API-KEY for automation, and none for sign-in and lookups", () => {
    const schemes = (document.components as Json).securitySchemes as Record<string, Json>
    expect(schemes.bearer).toMatchObject({ type: "http", scheme: "bearer" })
    expect(schemes.apiKey).toEqual(expect.objectContaining({ type: "apiKey", in: "header", name: "X-API-KEY" }))
    expect(operation("post", "/v1/kernel/tx").security).toEqual([{ bearer: [] }])
    expect(operation("get", "/v1/{network}/account/{address}/payout/{id}").security).toEqual([{ apiKey: [] }])
    expect(operation("post", "/functions/v1/signInWithOTP").security).toEqual([])
    expect(operation("get", "/api/{address}").security).toEqual([])
  })

  it("gives the real request schema of routes that decode their body after authenticating", () => {
    const body = (operation("post", "/v1/kernel/tx") as unknown as { requestBody: { content: Record<string, Json> } })
      .requestBody.content["application/json"]?.schema as { required: ReadonlyArray<string> }
    expect(body.required).toEqual(expect.arrayContaining(["userId", "chain", "to", "value", "data"]))
  })

  it("documents the problems the gateway actually answers, under their status", async () => {
    const cases = [
      ["post", "/functions/v1/signInWithOTP", "/functions/v1/signInWithOTP", { phone: 5 }, {}],
      ["post", "/v1/kernel/tx", "/v1/kernel/tx", {}, { authorization: "Bearer not-a-token" }],
      ["get", "/v1/{network}/account/{address}/payout/{id}", "/v1/anvil/account/0x1/payout/x", undefined, {}],
      ["get", "/api/{address}", "/api/nope", undefined, {}]
    ] as const
    for (const [method, template, path, body, headers] of cases) {
      const response = await fetch(`${served.url}${path}`, {
        method: method.toUpperCase(),
        headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const problem = (await response.json()) as { code: string }
      expect({ path, codes: documentedCodes(operation(method, template), response.status) }).toEqual({
        path,
        codes: expect.arrayContaining([problem.code])
      })
    }
  })

  describe("types generated with openapi-typescript", () => {
    let directory: string
    beforeAll(async () => {
      directory = mkdtempSync(join(tmpdir(), "walletgate-openapi-"))
      writeFileSync(join(directory, "api.ts"), astToString(await openapiTS(structuredClone(document) as never)))
    })
    afterAll(() => rmSync(directory, { recursive: true, force: true }))

    /** The type errors of each client, written against the generated `api.ts`: one program for all of them. */
    const typeErrors = (clients: ReadonlyArray<string>): ReadonlyArray<ReadonlyArray<string>> => {
      const files = clients.map((source, index) => {
        const file = join(directory, `client${index}.ts`)
        writeFileSync(file, source)
        return file
      })
      const program = ts.createProgram(files, {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        allowImportingTsExtensions: true,
        lib: ["lib.es2022.d.ts"],
        types: []
      })
      return files.map((file) =>
        ts
          .getPreEmitDiagnostics(program, program.getSourceFile(file))
          .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"))
      )
    }

    const CLIENT = `
      import type { paths } from "./api.ts"
      type Send = paths["/v1/kernel/tx"]["post"]
      type SendBody = Send["requestBody"]["content"]["application/json"]
      type Sent = Send["responses"]["200"]["content"]["application/json"]
      type Refused = Send["responses"]["401"]["content"]["application/problem+json"]
      type SignIn = paths["/functions/v1/signInWithOTP"]["post"]["requestBody"]["content"]["application/json"]

      interface Answer { readonly ok: boolean; json(): Promise<unknown> }
      type Fetch = (url: string, init: { method: string; headers: Record<string, string>; body: string }) => Promise<Answer>

      export const send = async (fetch: Fetch, base: string, token: string, body: SendBody): Promise<Sent> => {
        const response = await fetch(base + "/v1/kernel/tx", {
          method: "POST",
          headers: { authorization: "Bearer " + token, "content-type": "application/json" },
          body: JSON.stringify(body)
        })
        if (!response.ok) {
          const problem = (await response.json()) as Refused
          const code: "invalid_token" | "invalid_auth" | (string & {}) = problem.code
          throw new Error(code)
        }
        const sent = (await response.json()) as Sent
        const status: "pending" | "confirmed" | "failed" | (string & {}) = sent.status
        void status
        return sent
      }
      export const body: SendBody = { userId: "phone:1", chain: "anvil", to: [], value: [], data: [] }
      export const signIn: SignIn = { phone: "+14155552671" }
      `

    it("type-check a small client written against them, and refuse one that sends the wrong shape", () => {
      const [client, badPhone, noUser] = typeErrors([
        CLIENT,
        CLIENT.replace('{ phone: "+14155552671" }', "{ phone: 14155552671 }"),
        CLIENT.replace('userId: "phone:1", ', "")
      ])
      expect(client).toEqual([])
      // The check can fail: a wrong shape is a type error.
      expect(badPhone?.length).toBeGreaterThan(0)
      expect(noUser?.length).toBeGreaterThan(0)
    })
  })
})

describe("GET /openapi.json of a gateway of phone sign-in alone", () => {
  it("documents only its routes and no automation or app scheme", async () => {
    const gateway = composeGateway({ modules: [phoneSignIn()], ports: embeddedSignInPorts(), loggers: [] })
    const served = await serve(gateway)
    try {
      const document = (await (await fetch(`${served.url}/openapi.json`)).json()) as Json
      expect(Object.keys(document.paths as Json).sort()).toEqual([
        "/functions/v1/.well-known/jwks.json",
        "/functions/v1/signInWithOTP",
        "/functions/v1/verifyOTP",
        "/openapi.json",
        "/v1/health",
        "/v1/operator/metrics"
      ])
      expect((document.components as Json).securitySchemes).toEqual({})
      const result = await validate(structuredClone(document) as never)
      expect(result.valid ? [] : result.errors).toEqual([])
    } finally {
      served.server.close()
      await gateway.dispose()
    }
  })
})
