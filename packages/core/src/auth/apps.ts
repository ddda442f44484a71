import * as Schema from "effect/Schema"
import { type IdentityProviders, ProviderName } from "./IdentityProviders"

/** An app (API client) as registered by the operators. */
export const App = Schema.Struct({
  clientId: Schema.String,
  /** SHA-256 (hex) of the client secret; the secret itself is never stored. */
  secretHash: Schema.String,
  /**
   * The identity providers the app is granted, by name. The names are registered deployment-wide in
   * `IdentityProviders`; an app never defines how a provider is verified.
   */
  providers: Schema.Array(ProviderName),
  /** A test-mode app may send blank `auth` on test networks (its users are then test users of its own). */
  testMode: Schema.Boolean,
  /** The operator's label for the app (shown in listings and the audit log). */
  name: Schema.optionalKey(Schema.String),
  /** When the app was registered (epoch ms). */
  createdAt: Schema.optionalKey(Schema.Number),
  /**
   * The most gas a day (UTC) the gateway sponsors for all of the app's batches on each network, on top of the
   * network's hourly budgets (`spend.perApp`); none when absent.
   */
  gasPerDay: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })))
})
/** An app (API client) as registered by the operators. */
export type App = typeof App.Type

/** Whether `app` is granted the provider `name` (an own element of its grants: `constructor` is not one). */
export const isGranted = (app: App, name: string): boolean => app.providers.includes(name)

/** The names `providers` grants that are not registered in `registry`. */
export const unregisteredGrants = (
  registry: IdentityProviders["Service"],
  providers: ReadonlyArray<string>
): ReadonlyArray<string> => providers.filter((name) => registry.find(name) === undefined)
