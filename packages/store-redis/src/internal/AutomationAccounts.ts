import { type AutomationAccount, AutomationAccounts, PayoutPlan } from "@walletgate/core/payout"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Connection } from "./connection"

// One string per account, `{automation:<network>:<address in lower case>}`: the account and its payout
// plan as JSON, kept forever.
const AccountJson = Schema.fromJsonString(
  Schema.Struct({
    address: Schema.String,
    network: Schema.String,
    accountKey: Schema.String,
    coOwner: Schema.optionalKey(Schema.String),
    plan: Schema.optionalKey(PayoutPlan)
  })
)
const encodeAccount = Schema.encodeSync(AccountJson)

/** `AutomationAccounts` on Redis: each account under its network and address; plans are checked when read. */
export const redisAutomationAccounts = (connection: Connection): AutomationAccounts["Service"] => {
  const accountKey = (network: string, address: string) =>
    `${connection.keyPrefix}{automation:${network}:${address.toLowerCase()}}`
  return AutomationAccounts.of({
    find: (network, address) =>
      connection
        .send(
          "AutomationAccounts.find",
          (client) => client.get(accountKey(network, address)),
          Schema.NullOr(AccountJson)
        )
        .pipe(Effect.map((account): AutomationAccount | undefined => account ?? undefined)),
    save: (account) =>
      Effect.suspend(() =>
        connection.send(
          "AutomationAccounts.save",
          (client) => client.set(accountKey(account.network, account.address), encodeAccount(account)),
          Schema.Literal("OK")
        )
      ).pipe(Effect.asVoid)
  })
}
