// `walletgate accounts …`: the automation accounts of the gateway's store (Safes the service operates for payouts).
import { readFileSync } from "node:fs"
import * as Schema from "effect/Schema"
import type { AccountView } from "../operator/schemas"
import { PayoutPlan } from "../payout/accounts"
import { argument, fail, type HelpTexts, type Invocation, output, table, unknown } from "./common"
import { withOperator } from "./store"

/** The help of `walletgate accounts` and its commands. */
export const accountsHelp: HelpTexts = {
  accounts: `walletgate accounts: the automation accounts of the gateway's store, the Safes payouts are made from.

usage:
  walletgate accounts register --network <n> --key <accountKey> [--plan <file>] [--co-owner <address>] [--json]
  walletgate accounts list [--json]
needs: REDIS_URL (the gateways' Redis) and WALLETGATE_REDIS_KEY_PREFIX when the gateways set one`,
  "accounts register": `walletgate accounts register: registers an automation account and prints its Safe's address,
the same before and after the Safe is deployed (the first payout deploys it).

usage:
  walletgate accounts register --network <n> --key <accountKey> [--plan <file>] [--co-owner <address>] [--json]
options:
  --network <n>          a network of the networks file (slug, chain id or EIP-3770 name)
  --key <accountKey>     the account's name, 1 to 128 characters: its owner key derives from it
  --plan <file>          a JSON payout plan: { asset, recipients: [{ address, shareBps }], minimumPayout, reserve }
                         (shares add up to 10000; amounts in base units as decimal strings)
  --co-owner <address>   the customer's own key as a second owner of the Safe
  --json                 { address, network, accountKey, coOwner?, plan? }
needs: REDIS_URL (and WALLETGATE_REDIS_KEY_PREFIX when set), WALLETGATE_MASTER_SECRET (the gateways' own: the
  address derives from it) and WALLETGATE_NETWORKS_FILE or WALLETGATE_NETWORKS, as the gateways read them`,
  "accounts list": `walletgate accounts list: every automation account.

usage:
  walletgate accounts list [--json]     (--json: [{ address, network, accountKey, coOwner?, plan? }])
needs: REDIS_URL (the gateways' Redis) and WALLETGATE_REDIS_KEY_PREFIX when the gateways set one`
}

/** The payout plan of `--plan <file>`, decoded; fails naming the file and what is wrong. */
const readPlan = (file: string): PayoutPlan => {
  let json: unknown
  try {
    json = JSON.parse(readFileSync(file, "utf8"))
  } catch (error) {
    const code = (error as { code?: unknown }).code
    return fail(`--plan ${file} cannot be read as JSON (${typeof code === "string" ? code : "not JSON"})`)
  }
  try {
    return Schema.decodeUnknownSync(PayoutPlan)(json, { onExcessProperty: "error" })
  } catch (error) {
    return fail(`--plan ${file} is not a payout plan: ${error instanceof Error ? error.message : String(error)}`)
  }
}

const accountRows = (accounts: ReadonlyArray<AccountView>) =>
  table(
    ["NETWORK", "ADDRESS", "ACCOUNT KEY", "CO-OWNER", "PLAN"],
    accounts.map((account) => [
      account.network,
      account.address,
      account.accountKey,
      account.coOwner ?? "-",
      account.plan === undefined ? "-" : `${account.plan.recipients.length} recipients of ${account.plan.asset}`
    ]),
    "no automation accounts"
  )

/** Runs `walletgate accounts <command>`. */
export const runAccounts = async (invocation: Invocation): Promise<void> => {
  const { values } = invocation
  switch (invocation.positionals[1]) {
    case "register": {
      if (invocation.positionals.length > 2) argument(invocation, "nothing")
      const names = values.network ?? []
      if (names.length !== 1) fail("--network <n> is required, once")
      const accountKey = values.key ?? fail("--key <accountKey> is required")
      const plan = values.plan === undefined ? undefined : readPlan(values.plan)
      const coOwner = values["co-owner"]
      const account = await withOperator({ networks: "required", masterSecret: true }, (operator, call) =>
        operator.registerAccount(call, {
          network: names[0] ?? "",
          accountKey,
          ...(plan === undefined ? {} : { plan }),
          ...(coOwner === undefined ? {} : { coOwner })
        })
      )
      return output(invocation, account, () =>
        [
          `registered automation account ${account.accountKey} on ${account.network}`,
          `address  ${account.address}   (its Safe, deployed by its first payout)`
        ].join("\n")
      )
    }
    case "list": {
      const accounts = await withOperator({}, (operator) => operator.listAccounts)
      return output(invocation, accounts, () => accountRows(accounts))
    }
    default:
      return unknown("accounts", invocation)
  }
}
