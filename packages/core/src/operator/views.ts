import type { App } from "../auth/apps"
import type { ApiKeyRecord } from "../payout/ApiKeys"
import type { AutomationAccount } from "../payout/accounts"
import type { AccountView, AppView, KeyView } from "./schemas"

// What operators see of an app, an API key and an automation account.

/** An app as operators see it. */
export const appView = (app: App): AppView => ({
  clientId: app.clientId,
  ...(app.name === undefined ? {} : { name: app.name }),
  providers: app.providers,
  testMode: app.testMode,
  ...(app.createdAt === undefined ? {} : { createdAt: new Date(app.createdAt).toISOString() }),
  ...(app.gasPerDay === undefined ? {} : { gasPerDay: app.gasPerDay })
})

/** An API key's record as operators see it (the CLI's key file shows its keys so too). */
export const keyView = (record: ApiKeyRecord): KeyView => ({
  id: record.id,
  mode: record.mode,
  networks: record.networks,
  accounts: record.accounts,
  createdAt: new Date(record.createdAt).toISOString(),
  ...(record.lastUsedAt === undefined ? {} : { lastUsedAt: new Date(record.lastUsedAt).toISOString() }),
  ...(record.revokedAt === undefined ? {} : { revokedAt: new Date(record.revokedAt).toISOString() })
})

/** An automation account as operators see it. */
export const accountView = (account: AutomationAccount): AccountView => ({
  address: account.address,
  network: account.network,
  accountKey: account.accountKey,
  ...(account.coOwner === undefined ? {} : { coOwner: account.coOwner }),
  ...(account.plan === undefined ? {} : { plan: account.plan })
})
