import { type AutomationAccount, AutomationAccounts, PayoutPlan } from "@walletgate/core/payout"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Connection } from "./connection"

// One string per account, `{automation:<network>:<address in lower case>}`: the account and its payout
// plan as JSON, kept forever.
//
// `{automation-accounts}` = the set of `<network>:<address in lower case>` of every account, for listing: in another
// Cluster slot than the accounts, so a member is added before its account is written, and one whose account never
// came is skipped when listed (accounts are never removed).
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
  const member = (network: string, address: string) => `${network}:${address.toLowerCase()}`
  const accountKey = (network: string, address: string) =>
    `${connection.keyPrefix}{automation:${member(network, address)}}`
  const indexKey = `${connection.keyPrefix}{automation-accounts}`
  const find = (network: string, address: string) =>
    connection
      .send("AutomationAccounts.find", (client) => client.get(accountKey(network, address)), Schema.NullOr(AccountJson))
      .pipe(Effect.map((account): AutomationAccount | undefined => account ?? undefined))
  // The network is the member's text up to its last colon (a slug has none, an address none either).
  const findMember = (stored: string) => {
    const colon = stored.lastIndexOf(":")
    return find(stored.slice(0, colon), stored.slice(colon + 1))
  }
  return AutomationAccounts.of({
    find,
    save: (account) =>
      connection
        .send(
          "AutomationAccounts.save",
          (client) => client.sadd(indexKey, member(account.network, account.address)),
          Schema.Number
        )
        .pipe(
          Effect.andThen(
            Effect.suspend(() =>
              connection.send(
                "AutomationAccounts.save",
                (client) => client.set(accountKey(account.network, account.address), encodeAccount(account)),
                Schema.Literal("OK")
              )
            )
          ),
          Effect.asVoid
        ),
    list: connection
      .send("AutomationAccounts.list", (client) => client.smembers(indexKey), Schema.Array(Schema.String))
      .pipe(
        Effect.flatMap((members) => Effect.forEach(members, findMember, { concurrency: 16 })),
        Effect.map((accounts) => accounts.filter((account) => account !== undefined))
      )
  })
}
