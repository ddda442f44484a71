#!/usr/bin/env node
// The `walletgate` command: operators manage the gateway's store (apps, API keys, automation accounts, day budgets,
// the audit log: ./apps.ts, ./keys.ts, ./accounts.ts, ./budgets.ts, ./audit.ts over the operator module), and check
// and ready a deployment (identity providers, networks: ./deployment.ts). One file per command group.
import { accountsHelp, runAccounts } from "./accounts"
import { appsHelp, runApps } from "./apps"
import { auditHelp, runAudit } from "./audit"
import { budgetsHelp, runBudgets } from "./budgets"
import { CliFailure, fail, type HelpTexts, type Invocation, readCommandLine } from "./common"
import { deploymentHelp, runDeployment } from "./deployment"
import { keysHelp, runKeys } from "./keys"

const USAGE = `usage:
  walletgate apps create --name <label> --providers <name,…> [--test-mode]
  walletgate apps list | rotate-secret <clientId> | revoke <clientId>
  walletgate apps providers <clientId> --grant <name> | --revoke <name>
  walletgate keys create --network <n> --account <address> [--mode test|live]
  walletgate keys list | revoke <key id>
  walletgate accounts register --network <n> --key <accountKey> [--plan <file>] [--co-owner <address>]
  walletgate accounts list
  walletgate budgets show [--app <clientId>] | set --app <clientId> --gas-per-day <n>
  walletgate audit [--since <time>] [--limit <n>]
  walletgate providers check <file>
  walletgate contracts deploy --network <name> [--new-paymaster] [--deposit <amount>] [--stake <amount>]
  walletgate doctor --network <name>
  walletgate paymaster serve --network <name> --app <id>=<gas> [--window <seconds>] [--port <n>]
Every command takes --help; apps, keys, accounts, budgets, audit and doctor take --json.`

/** The command groups: how each runs. */
const GROUPS: Readonly<Record<string, (invocation: Invocation) => Promise<void>>> = {
  apps: runApps,
  keys: runKeys,
  accounts: runAccounts,
  budgets: runBudgets,
  audit: runAudit,
  providers: runDeployment,
  contracts: runDeployment,
  doctor: runDeployment,
  paymaster: runDeployment
}

/** What `--help` prints, for the CLI itself and for each group and command (`walletgate keys create --help`). */
const HELP: HelpTexts = {
  "": `walletgate: operator commands of a walletgate deployment.

${USAGE}

The commands on apps, keys, accounts, budgets and the audit log work on the gateways' store: the Redis of REDIS_URL
(with WALLETGATE_REDIS_KEY_PREFIX when the gateways set one), reached through @walletgate/redis; a change is seen
by every gateway at once. Without REDIS_URL they exit 1 (keys: or a key file, --file <path>).
Output: a table or lines for people; with --json one JSON value on stdout and nothing else. A secret (an app's
client secret, an API key) is printed once, when made or rotated. Errors go to stderr (never stdout, with --json
too) as "walletgate: <problem> [<code>]", with exit code 1.

Run 'walletgate <command> --help' for one command.`,
  ...appsHelp,
  ...keysHelp,
  ...accountsHelp,
  ...budgetsHelp,
  ...auditHelp,
  ...deploymentHelp
}

const main = async (): Promise<void> => {
  const invocation = readCommandLine(process.argv.slice(2))
  const { positionals, values } = invocation
  const [group] = positionals
  if (values.help === true || group === "help" || group === undefined) {
    // `walletgate help keys create` reads as `walletgate keys create --help`.
    const topic = (group === "help" ? positionals.slice(1, 3) : positionals.slice(0, 2)).join(" ")
    const help = HELP[topic] ?? HELP[topic.split(" ")[0] ?? ""]
    if (help === undefined) fail(`unknown command "${topic.slice(0, 64)}"`, true)
    process.stdout.write(`${help}\n`)
    // Nothing else runs: '--help' never creates, lists or revokes.
    if (group === undefined && values.help !== true) process.exitCode = 1
    return
  }
  const run = GROUPS[group] ?? fail(`unknown command "${group.slice(0, 64)}"`, true)
  await run(invocation)
}

main().catch((error: unknown) => {
  // A refusal (bad input, an operator error) or a failure while running (a node that refuses, a configuration
  // error): its message on stderr, the usage only when the command line could not be read.
  const usage = error instanceof CliFailure && error.usage ? `\n${USAGE}` : ""
  process.stderr.write(`walletgate: ${error instanceof Error ? error.message : String(error)}${usage}\n`)
  process.exitCode = 1
})
