import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { getAddress, isAddress } from "viem"
import { hashClientSecret, newClientSecret, registerApp } from "../auth/AppAuth"
import type { App } from "../auth/apps"
import { ClientStore } from "../auth/ClientStore"
import { UnknownIdentityProvider } from "../auth/errors"
import { IdentityProviders } from "../auth/IdentityProviders"
import { UnsupportedChain } from "../chain/errors"
import { Networks } from "../chain/networks"
import type { KeyVault } from "../operations/KeyVault"
import { SpendPolicy } from "../operations/SpendPolicy"
import { type ApiKeyMode, ApiKeyStore, makeApiKey } from "../payout/ApiKeys"
import { AutomationAccounts, type PayoutPlan, registerAutomationAccount } from "../payout/accounts"
import { SecureRandom } from "../random/SecureRandom"
import type { StoreUnavailable } from "../state/errors"
import { AuditLog, auditLimit } from "./AuditLog"
import { ApiKeyNotFound, AppNotFound, InvalidOperatorInput } from "./errors"
import {
  type AccountView,
  type AppView,
  type AuditAction,
  type AuditEntry,
  actorName,
  type BudgetView,
  type CreatedApp,
  type CreatedKey,
  type KeyView,
  type OperatorCall,
  type RotatedSecret
} from "./schemas"
import { accountView, appView, keyView } from "./views"

/** What {@link Operator.createApp} registers. */
export interface NewApp {
  /** The operator's label: 1 to 100 printable characters. */
  readonly name: string
  /** The identity providers granted (each registered in `IdentityProviders`). */
  readonly providers: ReadonlyArray<string>
  readonly testMode?: boolean
}

/** What {@link Operator.createKey} makes. */
export interface NewKey {
  /** The networks (slug, chain id or short name) the key may act on; each must be served. */
  readonly networks: ReadonlyArray<string>
  /** The automation account addresses the key may act on. */
  readonly accounts: ReadonlyArray<string>
  /** Default `live`. */
  readonly mode?: ApiKeyMode
}

/** What {@link Operator.registerAccount} registers. */
export interface NewAccount {
  readonly network: string
  /** The account's name (its key domain): 1 to 128 printable characters. */
  readonly accountKey: string
  readonly plan?: PayoutPlan
  /** The customer's own key (an address) as a second owner of the Safe. */
  readonly coOwner?: string
}

/**
 * What operators do, from the CLI or the operator API alike: apps and their secrets and providers, API keys,
 * automation accounts, day budgets, and the audit log every change is appended to (after it succeeded; never a
 * secret nor its hash). Secrets are returned once, at creation or rotation.
 */
export class Operator extends Context.Service<
  Operator,
  {
    /** Registers an app; returns its client secret, this once. */
    readonly createApp: (
      call: OperatorCall,
      app: NewApp
    ) => Effect.Effect<CreatedApp, InvalidOperatorInput | UnknownIdentityProvider | StoreUnavailable>
    /** Every app, without secrets. */
    readonly listApps: Effect.Effect<ReadonlyArray<AppView>, StoreUnavailable>
    /** Gives an app a new secret, returned this once; the old one is refused from now on. */
    readonly rotateSecret: (
      call: OperatorCall,
      clientId: string
    ) => Effect.Effect<RotatedSecret, AppNotFound | StoreUnavailable>
    /** Removes an app: its secret and its access tokens are refused from now on. */
    readonly revokeApp: (call: OperatorCall, clientId: string) => Effect.Effect<void, AppNotFound | StoreUnavailable>
    /** Grants an app a registered identity provider. */
    readonly grantProvider: (
      call: OperatorCall,
      clientId: string,
      provider: string
    ) => Effect.Effect<AppView, AppNotFound | UnknownIdentityProvider | StoreUnavailable>
    /** Takes an identity provider from an app (nothing is recorded when it was not granted). */
    readonly ungrantProvider: (
      call: OperatorCall,
      clientId: string,
      provider: string
    ) => Effect.Effect<AppView, AppNotFound | StoreUnavailable>
    /** Makes an API key; returns the key, this once. */
    readonly createKey: (
      call: OperatorCall,
      key: NewKey
    ) => Effect.Effect<CreatedKey, InvalidOperatorInput | UnsupportedChain | StoreUnavailable>
    /** Every API key, without the keys. */
    readonly listKeys: Effect.Effect<ReadonlyArray<KeyView>, StoreUnavailable>
    /** Revokes an API key: refused from now on (revoking a revoked key changes nothing and records nothing). */
    readonly revokeKey: (call: OperatorCall, id: string) => Effect.Effect<KeyView, ApiKeyNotFound | StoreUnavailable>
    /** Registers an automation account; its Safe's address is known before it is deployed. */
    readonly registerAccount: (
      call: OperatorCall,
      account: NewAccount
    ) => Effect.Effect<AccountView, InvalidOperatorInput | UnsupportedChain | StoreUnavailable>
    /** Every automation account. */
    readonly listAccounts: Effect.Effect<ReadonlyArray<AccountView>, StoreUnavailable>
    /** The day budgets of every app, or of one, with their use today on each network served. */
    readonly showBudgets: (
      clientId?: string
    ) => Effect.Effect<ReadonlyArray<BudgetView>, AppNotFound | StoreUnavailable>
    /**
     * Sets an app's day budget (gas per UTC day on each network, a whole number from 1), or removes it (`undefined`);
     * honoured by the spend policy from the app's next batch on.
     */
    readonly setBudget: (
      call: OperatorCall,
      clientId: string,
      gasPerDay: number | undefined
    ) => Effect.Effect<BudgetView, AppNotFound | InvalidOperatorInput | StoreUnavailable>
    /** The audit log, newest first: entries at or after `since` (epoch ms), at most `limit` (default 100, ≤ 1000). */
    readonly readAudit: (query?: {
      readonly since?: number
      readonly limit?: number
    }) => Effect.Effect<ReadonlyArray<AuditEntry>, StoreUnavailable>
  }
>()("@walletgate/core/Operator") {
  /**
   * The operator module over the stores (`ClientStore`, `ApiKeyStore`, `AutomationAccounts`, `AuditLog`), the
   * deployment's `IdentityProviders`, `Networks` and `KeyVault`, the `SpendPolicy` (day budgets' use) and `SecureRandom`.
   */
  static readonly layer: Layer.Layer<
    Operator,
    never,
    | ClientStore
    | ApiKeyStore
    | AutomationAccounts
    | AuditLog
    | IdentityProviders
    | Networks
    | KeyVault
    | SpendPolicy
    | SecureRandom
  > = Layer.effect(
    Operator,
    Effect.gen(function* () {
      const clients = yield* ClientStore
      const keys = yield* ApiKeyStore
      const accounts = yield* AutomationAccounts
      const audit = yield* AuditLog
      const providers = yield* IdentityProviders
      const networks = yield* Networks
      const spend = yield* SpendPolicy
      const random = yield* SecureRandom
      // What the reused helpers (`registerApp`, `makeApiKey`, `registerAutomationAccount`) read from the context.
      const context = yield* Effect.context<
        IdentityProviders | SecureRandom | ClientStore | Networks | KeyVault | AutomationAccounts
      >()

      const record = Effect.fnUntraced(function* (
        call: OperatorCall,
        action: AuditAction,
        target: string,
        detail?: AuditEntry["detail"]
      ) {
        const now = yield* Clock.currentTimeMillis
        yield* audit.append({
          id: `aud_${Buffer.from(yield* random.bytes(12)).toString("hex")}`,
          at: new Date(now).toISOString(),
          actor: bounded(actorName(call.actor)),
          action,
          target: bounded(target),
          ...(call.requestId === undefined ? {} : { requestId: bounded(call.requestId) }),
          ...(detail === undefined ? {} : { detail })
        })
      })

      const findApp = Effect.fnUntraced(function* (clientId: string) {
        const app = yield* clients.find(clientId)
        return app ?? (yield* new AppNotFound({ clientId }))
      })

      /** Replaces a registered app; one removed meanwhile (revoked) stays removed. */
      const replaceApp = Effect.fnUntraced(function* (app: App) {
        if (!(yield* clients.replace(app))) return yield* new AppNotFound({ clientId: app.clientId })
      })

      const createApp = Effect.fnUntraced(
        function* (call: OperatorCall, options: NewApp) {
          const name = yield* label("name", options.name, 100)
          if (options.providers.length > 32) {
            return yield* new InvalidOperatorInput({ field: "providers", reason: "at most 32 providers" })
          }
          const credentials = yield* registerApp({
            providers: options.providers,
            testMode: options.testMode ?? false,
            name
          }).pipe(Effect.provideContext(context))
          const app = yield* findApp(credentials.clientId)
          yield* record(call, "app.create", app.clientId, {
            name,
            providers: app.providers.join(","),
            testMode: String(app.testMode)
          })
          return {
            clientId: app.clientId,
            clientSecret: credentials.clientSecret,
            name,
            providers: app.providers,
            testMode: app.testMode,
            createdAt: new Date(app.createdAt ?? (yield* Clock.currentTimeMillis)).toISOString()
          } satisfies CreatedApp
        },
        Effect.catchTag("AppNotFound", () => Effect.die("an app just saved is not found"))
      )

      const rotateSecret = Effect.fnUntraced(function* (call: OperatorCall, clientId: string) {
        const app = yield* findApp(clientId)
        const clientSecret = yield* newClientSecret.pipe(Effect.provideContext(context))
        yield* replaceApp({ ...app, secretHash: hashClientSecret(clientSecret) })
        yield* record(call, "app.rotate_secret", clientId)
        return { clientId, clientSecret } satisfies RotatedSecret
      })

      const revokeApp = Effect.fnUntraced(function* (call: OperatorCall, clientId: string) {
        yield* findApp(clientId)
        yield* clients.remove(clientId)
        yield* record(call, "app.revoke", clientId)
      })

      const grantProvider = Effect.fnUntraced(function* (call: OperatorCall, clientId: string, provider: string) {
        if (providers.find(provider) === undefined) {
          return yield* new UnknownIdentityProvider({ providers: [provider.slice(0, 64)] })
        }
        const app = yield* findApp(clientId)
        if (app.providers.includes(provider)) return appView(app)
        const granted: App = { ...app, providers: [...app.providers, provider] }
        yield* replaceApp(granted)
        yield* record(call, "app.grant", clientId, { provider })
        return appView(granted)
      })

      const ungrantProvider = Effect.fnUntraced(function* (call: OperatorCall, clientId: string, provider: string) {
        const app = yield* findApp(clientId)
        if (!app.providers.includes(provider)) return appView(app)
        const left: App = { ...app, providers: app.providers.filter((name) => name !== provider) }
        yield* replaceApp(left)
        yield* record(call, "app.ungrant", clientId, { provider })
        return appView(left)
      })

      const createKey = Effect.fnUntraced(function* (call: OperatorCall, options: NewKey) {
        if (options.networks.length === 0 || options.networks.length > 16) {
          return yield* new InvalidOperatorInput({ field: "networks", reason: "from 1 to 16 networks" })
        }
        if (options.accounts.length === 0 || options.accounts.length > 100) {
          return yield* new InvalidOperatorInput({ field: "accounts", reason: "from 1 to 100 accounts" })
        }
        if (!options.accounts.every((account) => isAddress(account, { strict: false }))) {
          return yield* new InvalidOperatorInput({ field: "accounts", reason: "each must be a 20-byte hex address" })
        }
        const slugs: Array<string> = []
        for (const name of options.networks) {
          const network = networks.resolve(name)
          if (network === undefined) return yield* new UnsupportedChain({ chain: name.slice(0, 64) })
          if (!slugs.includes(network.slug)) slugs.push(network.slug)
        }
        const { key, record: made } = yield* makeApiKey({
          mode: options.mode ?? "live",
          networks: slugs,
          accounts: options.accounts
        }).pipe(Effect.provideContext(context))
        yield* keys.save(made)
        yield* record(call, "key.create", made.id, {
          mode: made.mode,
          networks: made.networks.join(","),
          accounts: made.accounts.join(",").slice(0, 256)
        })
        return { ...keyView(made), key } satisfies CreatedKey
      })

      const revokeKey = Effect.fnUntraced(function* (call: OperatorCall, id: string) {
        const found = yield* keys.find(id)
        if (found === undefined) return yield* new ApiKeyNotFound({ id: id.slice(0, 64) })
        const revoked = yield* keys.revoke(id, yield* Clock.currentTimeMillis)
        if (revoked) yield* record(call, "key.revoke", id)
        const now = yield* keys.find(id)
        return keyView(now ?? found)
      })

      const registerAccount = Effect.fnUntraced(function* (call: OperatorCall, options: NewAccount) {
        const accountKey = yield* label("accountKey", options.accountKey, 128)
        if (options.coOwner !== undefined && !isAddress(options.coOwner, { strict: false })) {
          return yield* new InvalidOperatorInput({ field: "coOwner", reason: "must be a 20-byte hex address" })
        }
        const account = yield* registerAutomationAccount({
          network: options.network,
          accountKey,
          ...(options.coOwner === undefined ? {} : { coOwner: getAddress(options.coOwner) }),
          ...(options.plan === undefined ? {} : { plan: options.plan })
        }).pipe(Effect.provideContext(context))
        yield* record(call, "account.register", `${account.network}:${account.address}`, {
          accountKey,
          ...(account.coOwner === undefined ? {} : { coOwner: account.coOwner }),
          plan: account.plan === undefined ? "none" : `${account.plan.recipients.length} recipients`
        })
        return accountView(account)
      })

      const budgetOf = Effect.fnUntraced(function* (app: App) {
        const now = yield* Clock.currentTimeMillis
        const usedToday = yield* Effect.forEach(networks.all, (network) =>
          Effect.map(spend.appGasToday(network, app.clientId), (gas) => ({ network: network.slug, gas }))
        )
        return {
          clientId: app.clientId,
          ...(app.name === undefined ? {} : { name: app.name }),
          ...(app.gasPerDay === undefined ? {} : { gasPerDay: app.gasPerDay }),
          usedToday,
          resetsAt: new Date(now - (now % DAY_MS) + DAY_MS).toISOString()
        } satisfies BudgetView
      })

      const showBudgets = Effect.fnUntraced(function* (clientId?: string) {
        const apps = clientId === undefined ? sortApps(yield* clients.list) : [yield* findApp(clientId)]
        return yield* Effect.forEach(apps, budgetOf)
      })

      const setBudget = Effect.fnUntraced(function* (
        call: OperatorCall,
        clientId: string,
        gasPerDay: number | undefined
      ) {
        if (gasPerDay !== undefined && (!Number.isSafeInteger(gasPerDay) || gasPerDay < 1)) {
          return yield* new InvalidOperatorInput({ field: "gasPerDay", reason: "must be a whole number from 1" })
        }
        const { gasPerDay: _previous, ...app } = yield* findApp(clientId)
        const next: App = gasPerDay === undefined ? app : { ...app, gasPerDay }
        yield* replaceApp(next)
        yield* record(call, "budget.set", clientId, { gasPerDay: gasPerDay ?? "none" })
        return yield* budgetOf(next)
      })

      return Operator.of({
        createApp,
        listApps: Effect.map(clients.list, (apps) => sortApps(apps).map(appView)),
        rotateSecret,
        revokeApp,
        grantProvider,
        ungrantProvider,
        createKey,
        listKeys: Effect.map(keys.list, (records) =>
          [...records].sort((a, b) => a.createdAt - b.createdAt || compare(a.id, b.id)).map(keyView)
        ),
        revokeKey,
        registerAccount,
        listAccounts: Effect.map(accounts.list, (found) =>
          [...found]
            .sort((a, b) => compare(a.network, b.network) || compare(a.address.toLowerCase(), b.address.toLowerCase()))
            .map(accountView)
        ),
        showBudgets,
        setBudget,
        readAudit: (query = {}) =>
          audit.list({
            ...(query.since === undefined ? {} : { since: query.since }),
            limit: auditLimit(query.limit ?? 100)
          })
      })
    })
  )
}

const DAY_MS = 86_400_000

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

const sortApps = (apps: ReadonlyArray<App>): Array<App> =>
  [...apps].sort((a, b) => (a.createdAt ?? 0) - (b.createdAt ?? 0) || compare(a.clientId, b.clientId))

/** Truncates what goes into an audit field to its bound. */
const bounded = (value: string): string => value.slice(0, 256)

/** A label an operator typed: trimmed, 1 to `max` characters, no control characters. */
const label = (field: string, value: string, max: number) => {
  const trimmed = value.trim()
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
  return trimmed.length === 0 || trimmed.length > max || /[\u0000-\u001f\u007f]/.test(trimmed)
    ? Effect.fail(new InvalidOperatorInput({ field, reason: `1 to ${max} printable characters` }))
    : Effect.succeed(trimmed)
}
