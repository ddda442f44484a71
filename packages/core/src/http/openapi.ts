import * as JsonSchema from "effect/JsonSchema"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import { FieldProblem } from "../internal/problem"
import { stateProblems } from "../state/errors"
import { idempotencyProblems } from "../state/IdempotencyStore"
import { transportProblems } from "./errors"
import { PROBLEM_JSON } from "./problem"
import type { Route, RouteSecurity } from "./route"

/** What the document needs of a problem slice: each mapping's status, code and title. */
type ProblemCodes = {
  readonly [tag: string]: { readonly status: number; readonly code: string; readonly title: string }
}

/** A route as the OpenAPI document sees it: the route, and the problem slices of the module that serves it. */
export interface DocumentedRoute {
  readonly route: Route<unknown>
  /** The slices beyond the transport's, state's and (for an idempotent route) idempotency's. */
  readonly problems: ReadonlyArray<ProblemCodes>
}

/** Options of {@link openApiDocument}. */
export interface OpenApiInfo {
  readonly title: string
  readonly version: string
}

type Json = { readonly [key: string]: unknown }

const SECURITY_SCHEMES: Readonly<Record<RouteSecurity, Json>> = {
  bearer: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "An app's access token from `POST /v1/auth`."
  },
  apiKey: { type: "apiKey", in: "header", name: "X-API-KEY", description: "An automation API key." },
  clientCredentials: {
    type: "http",
    scheme: "basic",
    description: "The app's client id and secret (RFC 6749 §2.3.1); or `client_id` and `client_secret` in the body."
  },
  operator: {
    type: "http",
    scheme: "bearer",
    description: "An operator token (`WALLETGATE_OPERATOR_TOKENS`), for the operator API."
  }
}

/** The problem document of `status` with one of `codes` (RFC 9457), as a schema. */
const problemSchema = (status: number, codes: readonly [string, ...Array<string>]) =>
  Schema.Struct({
    type: Schema.String,
    title: Schema.String,
    status: Schema.Literal(status),
    detail: Schema.String,
    // One code is a literal: `Literals` of one would be an `anyOf` of one.
    code: codes.length === 1 ? Schema.Literal(codes[0]) : Schema.Literals(codes),
    errors: Schema.optionalKey(Schema.Array(FieldProblem))
  })

/**
 * The OpenAPI 3.1 document of `routes`: each route's parameters, body and answers from its schemas (effect/Schema's
 * JSON Schema output), every problem code its slices can answer with under its status, and its security scheme.
 * Paths are relative to the server `.`: the mount the document is served under.
 */
export const openApiDocument = (info: OpenApiInfo, routes: ReadonlyArray<DocumentedRoute>): Json => {
  const components: Record<string, unknown> = {}
  const used = new Set<RouteSecurity>()

  /** The JSON Schema of `schema` in OpenAPI 3.1's dialect; its definitions join the components. */
  const jsonSchemaOf = (schema: Schema.Constraint): unknown => {
    const document = Schema.toJsonSchemaDocument(schema)
    const openApi = JsonSchema.toMultiDocumentOpenApi3_1({
      dialect: "draft-2020-12",
      schemas: [document.schema],
      definitions: document.definitions
    })
    for (const [name, definition] of Object.entries(openApi.definitions)) {
      const before = components[name]
      if (before !== undefined && JSON.stringify(before) !== JSON.stringify(definition)) {
        throw new TypeError(`walletgate: two schemas are both identified as ${name}`)
      }
      components[name] = definition
    }
    return openApi.schemas[0]
  }

  const paths: Record<string, Record<string, unknown>> = {}
  for (const { route, problems } of routes) {
    const doc = route.doc
    const path = route.path.replaceAll(/:([A-Za-z0-9_]+)/g, "{$1}")
    const paramFields = doc?.params?.fields ?? {}
    const parameters: Array<unknown> = [
      ...[...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map(([, name = ""]) => {
        const field = paramFields[name]
        return {
          name,
          in: "path",
          required: true,
          schema: field === undefined ? { type: "string" } : jsonSchemaOf(field)
        }
      }),
      ...Object.entries(doc?.query?.fields ?? {}).map(([name, field]) => ({
        name,
        in: "query",
        required: !SchemaAST.isOptional(field.ast),
        schema: jsonSchemaOf(field)
      })),
      ...(doc?.idempotent === true
        ? [
            {
              name: "Idempotency-Key",
              in: "header",
              required: false,
              description: "Retrying with the same key answers the first request's outcome instead of sending again.",
              schema: { type: "string", maxLength: 255 }
            }
          ]
        : [])
    ]

    const responses: Record<string, { description: string; content?: Record<string, unknown> }> = {}
    const respond = (status: number, description: string, mediaType: string, schema: unknown) => {
      const key = String(status)
      const before = responses[key]
      const content = schema === undefined ? undefined : { ...before?.content, [mediaType]: { schema } }
      responses[key] = {
        description: before === undefined ? description : `${before.description} ${description}`,
        ...(content === undefined ? (before?.content === undefined ? {} : { content: before.content }) : { content })
      }
    }
    for (const answer of doc?.answers ?? [{ status: 200, description: "OK" }]) {
      respond(
        answer.status,
        answer.description,
        answer.mediaType ?? "application/json",
        answer.schema === undefined ? undefined : jsonSchemaOf(answer.schema)
      )
    }
    const slices: ReadonlyArray<ProblemCodes> = [
      transportProblems,
      stateProblems,
      ...(doc?.idempotent === true ? [idempotencyProblems] : []),
      ...problems
    ]
    const byStatus = new Map<number, Map<string, string>>()
    for (const slice of slices) {
      for (const mapping of Object.values(slice)) {
        const codes = byStatus.get(mapping.status) ?? new Map<string, string>()
        codes.set(mapping.code, mapping.title)
        byStatus.set(mapping.status, codes)
      }
    }
    for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
      const [first, ...rest] = [...codes.keys()].sort()
      if (first === undefined) continue
      const list = [...codes].map(([code, title]) => `\`${code}\` (${title})`).join(", ")
      respond(status, `Problem: ${list}.`, PROBLEM_JSON, jsonSchemaOf(problemSchema(status, [first, ...rest])))
    }

    const bodySchema =
      doc?.body ?? (route.body !== undefined && route.body.ast._tag !== "Unknown" ? route.body : undefined)
    if (doc?.security !== undefined) used.add(doc.security)
    const operation = {
      ...(doc === undefined ? {} : { summary: doc.summary }),
      operationId: `${route.method.toLowerCase()}${route.path.replaceAll(/[^A-Za-z0-9]+(.)?/g, (_, next: string | undefined) => (next ?? "").toUpperCase())}`,
      ...(parameters.length === 0 ? {} : { parameters }),
      ...(bodySchema === undefined
        ? {}
        : {
            requestBody: {
              required: true,
              content: Object.fromEntries(route.accepts.map((media) => [media, { schema: jsonSchemaOf(bodySchema) }]))
            }
          }),
      responses,
      security: securityOf(doc?.security)
    }
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation }
  }

  return {
    openapi: "3.1.1",
    info,
    servers: [{ url: ".", description: "Where this document is served: the gateway's mount." }],
    paths,
    components: {
      schemas: components,
      securitySchemes: Object.fromEntries([...used].sort().map((name) => [name, SECURITY_SCHEMES[name]]))
    }
  }
}

/** The `security` of an operation: none, one scheme, or for client credentials Basic or the body. */
const securityOf = (security: RouteSecurity | undefined): ReadonlyArray<Json> => {
  switch (security) {
    case undefined:
      return []
    case "clientCredentials":
      return [{ clientCredentials: [] }, {}]
    default:
      return [{ [security]: [] }]
  }
}
