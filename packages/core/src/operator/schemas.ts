import * as Schema from "effect/Schema"
import { ApiKeyMode } from "../payout/ApiKeys"
import { PayoutPlan } from "../payout/accounts"

/** Who acts: an operator at the CLI (their user and host) or a caller of the operator API (its token's id). */
export type Actor =
  | { readonly kind: "cli"; readonly user: string; readonly host: string }
  | { readonly kind: "api"; readonly tokenId: string; readonly address: string }

/** How an actor is written in the audit log: `cli:alice@host1`, `api:ops-1@127.0.0.1`. */
export const actorName = (actor: Actor): string =>
  actor.kind === "cli" ? `cli:${actor.user}@${actor.host}` : `api:${actor.tokenId}@${actor.address}`

/** Who makes an operator change, and the request it came with (the operator API's `x-request-id`). */
export interface OperatorCall {
  readonly actor: Actor
  readonly requestId?: string
}

/** What an audit entry records as done. */
export const AuditAction = Schema.Literals([
  "app.create",
  "app.rotate_secret",
  "app.revoke",
  "app.grant",
  "app.ungrant",
  "key.create",
  "key.revoke",
  "account.register",
  "budget.set"
])
/** What an audit entry records as done. */
export type AuditAction = typeof AuditAction.Type

/** The most characters of one audit field (actor, target, request id, a detail's value). */
const AUDIT_FIELD_MAX = 256

const Field = Schema.String.check(Schema.isMaxLength(AUDIT_FIELD_MAX))

/** One change an operator made: who, what, to what, when. Never a secret or a secret's hash. */
export const AuditEntry = Schema.Struct({
  id: Schema.String,
  /** When (ISO 8601, UTC). */
  at: Schema.String,
  /** Who ({@link actorName}). */
  actor: Field,
  action: AuditAction,
  /** What was changed: a client id, a key id, `<network>:<address>`. */
  target: Field,
  requestId: Schema.optionalKey(Field),
  /** A few non-secret facts of the change (the provider granted, the budget set, …). */
  detail: Schema.optionalKey(
    Schema.Record(Schema.String, Schema.Union([Field, Schema.Number])).check(
      Schema.makeFilter((detail) => Object.keys(detail).length <= 16, { message: "Expected at most 16 details" })
    )
  )
})
/** One change an operator made. */
export type AuditEntry = typeof AuditEntry.Type

/** An app as operators see it: never its secret nor the secret's hash. */
export const AppView = Schema.Struct({
  clientId: Schema.String,
  name: Schema.optionalKey(Schema.String),
  providers: Schema.Array(Schema.String),
  testMode: Schema.Boolean,
  /** ISO 8601; absent for an app registered before apps recorded it. */
  createdAt: Schema.optionalKey(Schema.String),
  /** The app's day budget of gas per network (UTC days); absent when it has none. */
  gasPerDay: Schema.optionalKey(Schema.Number)
})
/** An app as operators see it. */
export type AppView = typeof AppView.Type

/** A newly created app, with its secret: shown this once, stored only as a hash. */
export const CreatedApp = Schema.Struct({
  clientId: Schema.String,
  clientSecret: Schema.String,
  name: Schema.String,
  providers: Schema.Array(Schema.String),
  testMode: Schema.Boolean,
  createdAt: Schema.String
})
/** A newly created app, with its secret. */
export type CreatedApp = typeof CreatedApp.Type

/** An app's new secret after a rotation: shown this once; the old one is refused from now on. */
export const RotatedSecret = Schema.Struct({ clientId: Schema.String, clientSecret: Schema.String })
/** An app's new secret after a rotation. */
export type RotatedSecret = typeof RotatedSecret.Type

/** An API key as operators see it: never the key nor its hash. Times are ISO 8601. */
export const KeyView = Schema.Struct({
  id: Schema.String,
  mode: ApiKeyMode,
  networks: Schema.Array(Schema.String),
  accounts: Schema.Array(Schema.String),
  createdAt: Schema.String,
  lastUsedAt: Schema.optionalKey(Schema.String),
  revokedAt: Schema.optionalKey(Schema.String)
})
/** An API key as operators see it. */
export type KeyView = typeof KeyView.Type

/** A newly created API key with the key itself: shown this once, stored only as a hash. */
export const CreatedKey = Schema.Struct({ ...KeyView.fields, key: Schema.String })
/** A newly created API key with the key itself. */
export type CreatedKey = typeof CreatedKey.Type

/** An automation account as operators see it (its owner key stays in the key vault). */
export const AccountView = Schema.Struct({
  /** The Safe's checksummed address, the same before and after deployment. */
  address: Schema.String,
  network: Schema.String,
  accountKey: Schema.String,
  coOwner: Schema.optionalKey(Schema.String),
  plan: Schema.optionalKey(PayoutPlan)
})
/** An automation account as operators see it. */
export type AccountView = typeof AccountView.Type

/** An app's day budget and its use today on each network served. */
export const BudgetView = Schema.Struct({
  clientId: Schema.String,
  name: Schema.optionalKey(Schema.String),
  /** Gas per UTC day on each network; absent when the app has no day budget. */
  gasPerDay: Schema.optionalKey(Schema.Number),
  /** Gas the app's batches reserved today, by network slug. */
  usedToday: Schema.Array(Schema.Struct({ network: Schema.String, gas: Schema.Number })),
  /** When today's window ends (ISO 8601). */
  resetsAt: Schema.String
})
/** An app's day budget and its use today. */
export type BudgetView = typeof BudgetView.Type
