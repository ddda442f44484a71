import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import {
  decoderOf,
  documented,
  type Method,
  type Reply,
  type RouteAnswer,
  type RouteContext,
  routeWithBody,
  routeWithoutBody
} from "../http/route"
import type { Tagged } from "../internal/problem"
import { ApiKeyMode } from "../payout/ApiKeys"
import { PayoutPlan } from "../payout/accounts"
import { RECENT_LIST_MAX, TxStatus } from "../state/TransactionLog"
import { AUDIT_LIST_MAX } from "./AuditLog"
import type { operatorGuard } from "./guard"
import { Operator } from "./Operator"
import { AccountBalanceView, NetworkView, OperationView, OperatorReads } from "./reads"
import {
  AccountView,
  AppView,
  AuditEntry,
  BudgetView,
  CreatedApp,
  CreatedKey,
  KeyView,
  type OperatorCall,
  RotatedSecret
} from "./schemas"

const Text = (max: number) =>
  Schema.String.check(Schema.isMaxLength(max, { message: `Expected at most ${max} characters` }))
const List = <S extends Schema.Top>(item: S, max: number) =>
  Schema.Array(item).check(Schema.isMaxLength(max, { message: `Expected at most ${max} items` }))

/** Body of `POST /v1/operator/apps`. */
export const CreateAppRequest = Schema.Struct({
  name: Text(100),
  providers: List(Text(64), 32),
  testMode: Schema.optionalKey(Schema.Boolean)
})

/** Body of `POST /v1/operator/apps/{clientId}/providers`: one provider granted or taken away. */
export const AppProvidersRequest = Schema.Union([
  Schema.Struct({ grant: Text(64) }),
  Schema.Struct({ revoke: Text(64) })
])

/** Body of `POST /v1/operator/keys`. */
export const CreateKeyRequest = Schema.Struct({
  networks: List(Text(64), 32),
  accounts: List(Text(64), 256),
  mode: Schema.optionalKey(ApiKeyMode)
})

/** Body of `POST /v1/operator/accounts`. */
export const RegisterAccountRequest = Schema.Struct({
  network: Text(64),
  accountKey: Text(128),
  plan: Schema.optionalKey(PayoutPlan),
  coOwner: Schema.optionalKey(Text(64))
})

/** Body of `PUT /v1/operator/budgets/{clientId}`: gas per UTC day on each network, or `null` for no day budget. */
export const SetBudgetRequest = Schema.Struct({ gasPerDay: Schema.NullOr(Schema.Number) })

const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/
const Time = Schema.String.check(
  Schema.makeFilter((value) => ISO_TIME.test(value) && !Number.isNaN(Date.parse(value)), {
    message: "Expected an ISO 8601 time (2026-01-31 or 2026-01-31T12:00:00Z)"
  })
)
const Limit = Schema.String.check(Schema.isPattern(/^[0-9]{1,4}$/, { message: "Expected a whole number" }))

/** The query of `GET /v1/operator/audit`. */
export const AuditQueryParams = Schema.Struct({ since: Schema.optionalKey(Time), limit: Schema.optionalKey(Limit) })

/** The query of `GET /v1/operator/operations`. */
export const OperationsQueryParams = Schema.Struct({
  app: Schema.optionalKey(Text(128)),
  status: Schema.optionalKey(TxStatus),
  since: Schema.optionalKey(Time),
  until: Schema.optionalKey(Time),
  limit: Schema.optionalKey(Limit)
})

/** The query of `GET /v1/operator/budgets`. */
export const BudgetsQueryParams = Schema.Struct({ app: Schema.optionalKey(Text(128)) })

// Unknown fields are refused, never dropped: an operator's field the gateway does not know may mean something they expect.
const decodeCreateApp = decoderOf(CreateAppRequest, { exact: true })
const decodeProviders = decoderOf(AppProvidersRequest, { exact: true })
const decodeCreateKey = decoderOf(CreateKeyRequest, { exact: true })
const decodeAccount = decoderOf(RegisterAccountRequest, { exact: true })
const decodeBudget = decoderOf(SetBudgetRequest, { exact: true })
const decodeAuditQuery = decoderOf(AuditQueryParams, { exact: true })
const decodeOperationsQuery = decoderOf(OperationsQueryParams, { exact: true })
const decodeBudgetsQuery = decoderOf(BudgetsQueryParams, { exact: true })

const queryOf = (context: RouteContext) => Object.fromEntries(context.request.query)
const epochOf = (time: string | undefined) => (time === undefined ? undefined : Date.parse(time))

// Operators' answers hold secrets (once) and the state of every app: never kept by a cache, problems included.
const NO_STORE = { "cache-control": "no-store" } as const

/** The operator API's routes, each behind `guard` (the rate limit, then the operator token). */
export const operatorRoutes = (guard: ReturnType<typeof operatorGuard>) => {
  /** A route behind the guard: `answer` runs with who acts once the guard let them through. */
  const route = <R, E extends Tagged>(
    method: Method,
    path: string,
    doc: {
      readonly summary: string
      readonly answers: ReadonlyArray<RouteAnswer>
      readonly body?: Schema.Constraint
      readonly query?: Schema.Struct<Schema.Struct.Fields>
    },
    answer: (call: OperatorCall, context: RouteContext, body: unknown) => Effect.Effect<Reply, E, R>
  ) => {
    const run = (context: RouteContext, body: unknown) =>
      Effect.flatMap(guard(context), (call) => answer(call, context, body))
    const bare =
      doc.body === undefined
        ? routeWithoutBody(method, path, (context) => run(context, undefined))
        : routeWithBody(method, path, Schema.Unknown, (body, context) => run(context, body))
    return documented({ ...bare, answerHeaders: () => Effect.succeed(NO_STORE) }, { ...doc, security: "operator" })
  }
  const ok = (body: unknown, status = 200): Reply => ({ status, body })
  const clientIdOf = (context: RouteContext) => context.params.clientId ?? ""

  return [
    route(
      "GET",
      "/v1/operator/apps",
      {
        summary: "Every app, without secrets.",
        answers: [{ status: 200, description: "The apps.", schema: Schema.Array(AppView) }]
      },
      () =>
        Effect.map(
          Operator.use((operator) => operator.listApps),
          (apps) => ok(apps)
        )
    ),
    route(
      "POST",
      "/v1/operator/apps",
      {
        summary: "Registers an app; its client secret is in this answer only.",
        body: CreateAppRequest,
        answers: [{ status: 201, description: "The app and its secret.", schema: CreatedApp }]
      },
      (call, _, body) =>
        Effect.gen(function* () {
          const request = yield* decodeCreateApp(body)
          return ok(yield* (yield* Operator).createApp(call, request), 201)
        })
    ),
    route(
      "POST",
      "/v1/operator/apps/:clientId/rotate-secret",
      {
        summary: "Gives an app a new client secret (in this answer only); the old one is refused from now on.",
        answers: [{ status: 200, description: "The new secret.", schema: RotatedSecret }]
      },
      (call, context) =>
        Effect.map(
          Operator.use((operator) => operator.rotateSecret(call, clientIdOf(context))),
          (rotated) => ok(rotated)
        )
    ),
    route(
      "DELETE",
      "/v1/operator/apps/:clientId",
      {
        summary: "Revokes an app: its secret and access tokens are refused from now on.",
        answers: [{ status: 204, description: "Revoked." }]
      },
      (call, context) =>
        Effect.as(
          Operator.use((operator) => operator.revokeApp(call, clientIdOf(context))),
          ok(undefined, 204)
        )
    ),
    route(
      "POST",
      "/v1/operator/apps/:clientId/providers",
      {
        summary: "Grants an app a registered identity provider (`{grant}`) or takes one away (`{revoke}`).",
        body: AppProvidersRequest,
        answers: [{ status: 200, description: "The app.", schema: AppView }]
      },
      (call, context, body) =>
        Effect.gen(function* () {
          const request = yield* decodeProviders(body)
          const operator = yield* Operator
          const app =
            "grant" in request
              ? yield* operator.grantProvider(call, clientIdOf(context), request.grant)
              : yield* operator.ungrantProvider(call, clientIdOf(context), request.revoke)
          return ok(app)
        })
    ),
    route(
      "GET",
      "/v1/operator/keys",
      {
        summary: "Every API key, without the keys.",
        answers: [{ status: 200, description: "The keys.", schema: Schema.Array(KeyView) }]
      },
      () =>
        Effect.map(
          Operator.use((operator) => operator.listKeys),
          (keys) => ok(keys)
        )
    ),
    route(
      "POST",
      "/v1/operator/keys",
      {
        summary: "Makes an API key for automation accounts; the key is in this answer only.",
        body: CreateKeyRequest,
        answers: [{ status: 201, description: "The key.", schema: CreatedKey }]
      },
      (call, _, body) =>
        Effect.gen(function* () {
          const request = yield* decodeCreateKey(body)
          return ok(yield* (yield* Operator).createKey(call, request), 201)
        })
    ),
    route(
      "DELETE",
      "/v1/operator/keys/:id",
      {
        summary: "Revokes an API key: refused from now on.",
        answers: [{ status: 200, description: "The key, revoked.", schema: KeyView }]
      },
      (call, context) =>
        Effect.map(
          Operator.use((operator) => operator.revokeKey(call, context.params.id ?? "")),
          (key) => ok(key)
        )
    ),
    route(
      "GET",
      "/v1/operator/accounts",
      {
        summary: "Every automation account, with its native balance read now (`null` when it cannot be read).",
        answers: [{ status: 200, description: "The accounts.", schema: Schema.Array(AccountBalanceView) }]
      },
      () =>
        Effect.gen(function* () {
          const accounts = yield* (yield* Operator).listAccounts
          return ok(yield* (yield* OperatorReads).withBalances(accounts))
        })
    ),
    route(
      "POST",
      "/v1/operator/accounts",
      {
        summary: "Registers an automation account; its Safe's address is known before it is deployed.",
        body: RegisterAccountRequest,
        answers: [{ status: 201, description: "The account.", schema: AccountView }]
      },
      (call, _, body) =>
        Effect.gen(function* () {
          const request = yield* decodeAccount(body)
          return ok(yield* (yield* Operator).registerAccount(call, request), 201)
        })
    ),
    route(
      "GET",
      "/v1/operator/budgets",
      {
        summary: "The day budgets of every app (or of `app`), with their use today on each network.",
        query: BudgetsQueryParams,
        answers: [{ status: 200, description: "The budgets.", schema: Schema.Array(BudgetView) }]
      },
      (_, context) =>
        Effect.gen(function* () {
          const query = yield* decodeBudgetsQuery(queryOf(context))
          return ok(yield* (yield* Operator).showBudgets(query.app))
        })
    ),
    route(
      "PUT",
      "/v1/operator/budgets/:clientId",
      {
        summary: "Sets an app's day budget of gas per network (`null`: none); honoured from its next batch on.",
        body: SetBudgetRequest,
        answers: [{ status: 200, description: "The budget.", schema: BudgetView }]
      },
      (call, context, body) =>
        Effect.gen(function* () {
          const request = yield* decodeBudget(body)
          return ok(yield* (yield* Operator).setBudget(call, clientIdOf(context), request.gasPerDay ?? undefined))
        })
    ),
    route(
      "GET",
      "/v1/operator/audit",
      {
        summary: `The audit log, newest first: entries at or after \`since\`, at most \`limit\` (default 100, at most ${AUDIT_LIST_MAX}).`,
        query: AuditQueryParams,
        answers: [{ status: 200, description: "The entries.", schema: Schema.Array(AuditEntry) }]
      },
      (_, context) =>
        Effect.gen(function* () {
          const query = yield* decodeAuditQuery(queryOf(context))
          const since = epochOf(query.since)
          const entries = yield* (yield* Operator).readAudit({
            ...(since === undefined ? {} : { since }),
            ...(query.limit === undefined ? {} : { limit: Number(query.limit) })
          })
          return ok(entries)
        })
    ),
    route(
      "GET",
      "/v1/operator/operations",
      {
        summary: `The recent user operations of every app, newest first (pending ones read now): by \`app\`, \`status\`, \`since\`, \`until\`; at most \`limit\` (default 50, at most ${RECENT_LIST_MAX}).`,
        query: OperationsQueryParams,
        answers: [{ status: 200, description: "The operations.", schema: Schema.Array(OperationView) }]
      },
      (_, context) =>
        Effect.gen(function* () {
          const query = yield* decodeOperationsQuery(queryOf(context))
          const since = epochOf(query.since)
          const until = epochOf(query.until)
          const operations = yield* (yield* OperatorReads).operations({
            ...(query.app === undefined ? {} : { owner: query.app }),
            ...(query.status === undefined ? {} : { status: query.status }),
            ...(since === undefined ? {} : { since }),
            ...(until === undefined ? {} : { until }),
            limit: query.limit === undefined ? 50 : Number(query.limit)
          })
          return ok(operations)
        })
    ),
    route(
      "GET",
      "/v1/operator/networks",
      {
        summary: "Each network served: its bundler's health and its paymaster's deposit at the EntryPoint.",
        answers: [{ status: 200, description: "The networks.", schema: Schema.Array(NetworkView) }]
      },
      () =>
        Effect.map(
          OperatorReads.use((reads) => reads.networks),
          (networks) => ok(networks)
        )
    )
  ]
}
