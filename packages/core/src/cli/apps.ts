// `walletgate apps …`: the apps of the gateway's store (client id and secret, identity providers), for operators.
import type { AppView } from "../operator/schemas"
import { argument, fail, type HelpTexts, type Invocation, output, SHOWN_ONCE, table, unknown } from "./common"
import { withOperator } from "./store"

const STORE = `needs: REDIS_URL (the gateways' Redis) and WALLETGATE_REDIS_KEY_PREFIX when the gateways set one`

/** The help of `walletgate apps` and its commands. */
export const appsHelp: HelpTexts = {
  apps: `walletgate apps: the apps of the gateway's store: their client id and secret, their identity providers.

usage:
  walletgate apps create --name <label> --providers <name,…> [--test-mode] [--json]
  walletgate apps list [--json]
  walletgate apps rotate-secret <clientId> [--json]
  walletgate apps revoke <clientId> [--json]
  walletgate apps providers <clientId> --grant <name> | --revoke <name> [--json]
${STORE}`,
  "apps create": `walletgate apps create: registers an app and prints its client id and secret; the secret is shown
this once (the store keeps its hash).

usage:
  walletgate apps create --name <label> --providers <name,…> [--test-mode] [--json]
options:
  --name <label>          the operator's label, 1 to 100 characters
  --providers <name,…>    the identity providers the app may sign users in with (phone, tel, and those of
                          WALLETGATE_IDENTITY_PROVIDERS, read as the gateways read it)
  --test-mode             a test app (blank auth on test networks)
  --json                  { clientId, clientSecret, name, providers, testMode, createdAt }
${STORE}`,
  "apps list": `walletgate apps list: every app, without secrets.

usage:
  walletgate apps list [--json]     (--json: [{ clientId, name?, providers, testMode, createdAt?, gasPerDay? }])
${STORE}`,
  "apps rotate-secret": `walletgate apps rotate-secret: gives an app a new secret, shown this once; every gateway refuses the
old one from now on.

usage:
  walletgate apps rotate-secret <clientId> [--json]     (--json: { clientId, clientSecret })
${STORE}`,
  "apps revoke": `walletgate apps revoke: removes an app; every gateway refuses its secret and its access tokens from now on.

usage:
  walletgate apps revoke <clientId> [--json]     (--json: { clientId, revoked: true })
${STORE}`,
  "apps providers": `walletgate apps providers: grants an app an identity provider, or takes one from it.

usage:
  walletgate apps providers <clientId> --grant <name> [--json]
  walletgate apps providers <clientId> --revoke <name> [--json]
options:
  --grant <name>    a provider of the deployment (phone, tel, or one of WALLETGATE_IDENTITY_PROVIDERS)
  --revoke <name>   a provider the app has
  --json            the app: { clientId, name?, providers, testMode, createdAt?, gasPerDay? }
${STORE}`
}

const appRows = (apps: ReadonlyArray<AppView>) =>
  table(
    ["CLIENT ID", "NAME", "PROVIDERS", "MODE", "GAS/DAY", "CREATED"],
    apps.map((app) => [
      app.clientId,
      app.name ?? "-",
      app.providers.join(","),
      app.testMode ? "test" : "live",
      app.gasPerDay === undefined ? "-" : String(app.gasPerDay),
      app.createdAt ?? "-"
    ]),
    "no apps"
  )

/** Runs `walletgate apps <command>`. */
export const runApps = async (invocation: Invocation): Promise<void> => {
  const { values } = invocation
  switch (invocation.positionals[1]) {
    case "create": {
      const name = values.name ?? fail("--name <label> is required")
      const providers = (values.providers ?? fail("--providers <name,…> is required"))
        .split(",")
        .map((provider) => provider.trim())
        .filter((provider) => provider !== "")
      if (providers.length === 0) fail("--providers names at least one identity provider")
      const created = await withOperator({ providers: true }, (operator, call) =>
        operator.createApp(call, { name, providers, testMode: values["test-mode"] === true })
      )
      return output(invocation, created, () =>
        [
          `created app ${created.clientId} "${created.name}" (${created.testMode ? "test" : "live"}; providers ${created.providers.join(", ")})`,
          `client id      ${created.clientId}`,
          `client secret  ${created.clientSecret}`,
          SHOWN_ONCE
        ].join("\n")
      )
    }
    case "list": {
      const apps = await withOperator({}, (operator) => operator.listApps)
      return output(invocation, apps, () => appRows(apps))
    }
    case "rotate-secret": {
      const clientId = argument(invocation, "the client id")
      const rotated = await withOperator({}, (operator, call) => operator.rotateSecret(call, clientId))
      return output(invocation, rotated, () =>
        [
          `rotated the secret of ${rotated.clientId}: every gateway refuses the old one from now on`,
          `client secret  ${rotated.clientSecret}`,
          SHOWN_ONCE
        ].join("\n")
      )
    }
    case "revoke": {
      const clientId = argument(invocation, "the client id")
      await withOperator({}, (operator, call) => operator.revokeApp(call, clientId))
      return output(invocation, { clientId, revoked: true }, () => `revoked app ${clientId}`)
    }
    case "providers": {
      const clientId = argument(invocation, "the client id")
      const { grant, revoke } = values
      if ((grant === undefined) === (revoke === undefined)) fail("give one of --grant <name> or --revoke <name>")
      const app = await withOperator({ providers: grant !== undefined }, (operator, call) =>
        grant !== undefined
          ? operator.grantProvider(call, clientId, grant)
          : // One of the two is given (checked above).
            operator.ungrantProvider(call, clientId, revoke ?? "")
      )
      return output(invocation, app, () => `${app.clientId} has providers ${app.providers.join(", ") || "none"}`)
    }
    default:
      return unknown("apps", invocation)
  }
}
