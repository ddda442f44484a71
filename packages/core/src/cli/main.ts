#!/usr/bin/env node
// `walletgate keys create|list|revoke`: API keys of the automation interface, for operators.
// `walletgate providers check <file>`: the identity providers a deployment would register, checked before it starts.
// `walletgate contracts deploy --network <name>` and `walletgate doctor --network <name>`: a network of the networks
// file, made ready and checked.
import { readFileSync } from "node:fs"
import { parseArgs } from "node:util"
import * as Effect from "effect/Effect"
import { IdentityProviders } from "../auth/IdentityProviders"
import { findNetwork } from "../chain/networks"
import { deployerKeyFromEnv, networkSettingsFromEnv } from "../config/networksEnv"
import { type NetworkSettings, parseAmount } from "../config/networksFile"
import {
  type ApiKeyMode,
  type ApiKeyStore,
  apiKeyFileStore,
  createApiKey,
  listApiKeys,
  revokeApiKey
} from "../payout/ApiKeys"
import { SecureRandom } from "../random/SecureRandom"
import { StoreUnavailable } from "../state/errors"
import { deployNetworkContracts, deployTable } from "./contracts"
import { doctorTable, runDoctor } from "./doctor"
import { paymasterHelp, servePaymaster } from "./paymaster"

const USAGE = `usage:
  walletgate keys create --network <slug> [--network …] --account <address> [--account …] [--mode live|test]
  walletgate keys list
  walletgate keys revoke <key id>     (an id that begins with "-": walletgate keys revoke -- <key id>)
  walletgate providers check <file>   (a JSON array of { name, issuer, audience, jwksUrl, algorithms, subjectClaim? },
                                       as WALLETGATE_IDENTITY_PROVIDERS holds it)
  walletgate contracts deploy --network <name> [--new-paymaster] [--deposit <amount>] [--stake <amount>]
  walletgate doctor --network <name> [--json]
  walletgate paymaster serve --network <name> --app <id>=<gas> [--window <seconds>] [--port <n>]
options:
  --file <path>   the key file (default: $WALLETGATE_KEYS_FILE or ./walletgate-keys.json)
networks come from $WALLETGATE_NETWORKS_FILE (or $WALLETGATE_NETWORKS); <name> is a slug, chain id or EIP-3770 name`

/** What `--help` prints, for the CLI itself and for each group and command (`walletgate keys create --help`). */
const HELP: Readonly<Record<string, string>> = {
  "": `walletgate: operator commands of a walletgate deployment.

${USAGE}

Run 'walletgate <command> --help' for one command.`,
  keys: `walletgate keys: API keys of the automation interface (X-API-KEY), kept hashed in a JSON file.

usage:
  walletgate keys create --network <slug> --account <address> [--mode live|test]
  walletgate keys list
  walletgate keys revoke <key id>
options:
  --file <path>   the key file (default: $WALLETGATE_KEYS_FILE or ./walletgate-keys.json)`,
  "keys create": `walletgate keys create: makes an API key for automation accounts on networks, prints it once.

usage:
  walletgate keys create --network <slug> [--network …] --account <address> [--account …] [--mode live|test]
options:
  --network <slug>     a network the key may pay out on (repeat for several)
  --account <address>  an automation account the key may pay out from (repeat for several)
  --mode live|test     a live or a test key (default live)
  --file <path>        the key file (default: $WALLETGATE_KEYS_FILE or ./walletgate-keys.json)`,
  "keys list": `walletgate keys list: every key of the file, without the keys themselves (id, mode, state, use).

usage:
  walletgate keys list [--file <path>]`,
  "keys revoke": `walletgate keys revoke: revokes a key by its id (as 'keys list' shows it).

usage:
  walletgate keys revoke <key id>
  walletgate keys revoke -- <key id>   (an id that begins with "-")
options:
  --file <path>   the key file (default: $WALLETGATE_KEYS_FILE or ./walletgate-keys.json)`,
  providers: `walletgate providers: the external identity providers a deployment registers.

usage:
  walletgate providers check <file>`,
  contracts: `walletgate contracts: the contracts a network needs, deployed where missing.

usage:
  walletgate contracts deploy --network <name> [--new-paymaster] [--deposit <amount>] [--stake <amount>]`,
  "contracts deploy": `walletgate contracts deploy: deploys whatever is missing on a network of the networks file, from
$WALLETGATE_DEPLOYER_KEY's account: EntryPoint v0.7, the Safe singleton factory (its presigned deployment), Safe
1.4.1 (singleton, L2 singleton, proxy factory, MultiSend, MultiSendCallOnly, fallback handler), Safe4337Module and
SafeModuleSetup at their canonical addresses, then the operator's VerifyingPaymaster and its deposit. A second run
deploys nothing and says so. The node must report the configured chain id.

usage:
  walletgate contracts deploy --network <name> [--new-paymaster] [--deposit <amount>] [--stake <amount>]
options:
  --network <name>       a network of $WALLETGATE_NETWORKS_FILE: its slug, chain id or EIP-3770 name
  --new-paymaster        deploy a paymaster when the file names no address (then set the printed address in the file)
  --deposit <amount>     the paymaster's deposit at the EntryPoint to reach, e.g. "0.5 ether" (default: the file's
                         paymaster.minDeposit, else none)
  --stake <amount>       stake to add when the paymaster has none, e.g. "0.1 ether" (bundlers on public networks
                         want staked paymasters; default none)
  --unstake-delay <s>    the stake's unstake delay in seconds (default 86400)`,
  doctor: `walletgate doctor: checks a network of the networks file as the gateway will use it: the node's chain id,
the code hash at each contract's address, the paymaster (code, EntryPoint, signer, deposit; or a paymaster service:
stub data for a dry operation, and code at the paymaster it names), the bundler
(eth_supportedEntryPoints), the fee caps and the spend budgets; prints a table and exits 1 if a check fails.

usage:
  walletgate doctor --network <name> [--json]
options:
  --network <name>   a network of $WALLETGATE_NETWORKS_FILE: its slug, chain id or EIP-3770 name
  --json             the checks as JSON ({ network, ok, checks: [{ check, status, detail }] })`,
  paymaster: paymasterHelp,
  "providers check": `walletgate providers check: builds the identity providers a file describes, as a gateway would at start,
and lists them; exits 1 naming the first invalid entry.

usage:
  walletgate providers check <file>   (a JSON array of { name, issuer, audience, jwksUrl, algorithms, subjectClaim? },
                                       as WALLETGATE_IDENTITY_PROVIDERS holds it)`
}

const fail = (message: string): never => {
  process.stderr.write(`walletgate: ${message}\n${USAGE}\n`)
  process.exit(1)
}

const { values, positionals } = (() => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        network: { type: "string", multiple: true },
        account: { type: "string", multiple: true },
        mode: { type: "string" },
        file: { type: "string" },
        deposit: { type: "string" },
        stake: { type: "string" },
        "unstake-delay": { type: "string" },
        "new-paymaster": { type: "boolean" },
        json: { type: "boolean" },
        app: { type: "string", multiple: true },
        window: { type: "string" },
        port: { type: "string" },
        host: { type: "string" },
        help: { type: "boolean", short: "h" }
      }
    })
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error))
  }
})()

const file = values.file ?? process.env.WALLETGATE_KEYS_FILE ?? "walletgate-keys.json"
const [group, command, ...rest] = positionals
if (values.help === true || group === "help" || group === undefined) {
  // `walletgate help keys create` reads as `walletgate keys create --help`.
  const topic = (group === "help" ? positionals.slice(1, 3) : positionals.slice(0, 2)).join(" ")
  const help = HELP[topic] ?? HELP[topic.split(" ")[0] ?? ""]
  if (help === undefined) fail(`no command ${topic}`)
  process.stdout.write(`${help}\n`)
  // Nothing else runs: '--help' never creates, lists or revokes.
  process.exit(group === undefined && values.help !== true ? 1 : 0)
}
if (!["keys", "providers", "contracts", "doctor", "paymaster"].includes(group)) fail("unknown command")

const run = <A, E>(effect: Effect.Effect<A, E, ApiKeyStore | SecureRandom>) =>
  Effect.runPromise(
    effect.pipe(
      Effect.provide(apiKeyFileStore(file)),
      Effect.provide(SecureRandom.crypto),
      // The store names only its operation: say which file, and what it should hold.
      Effect.mapError((error) =>
        error instanceof StoreUnavailable
          ? new Error(`${file} cannot be read or written as a key file (a JSON array of key records)`)
          : error
      )
    )
  )

/** Builds the registry the file describes, as a gateway would at start, and lists it; exits 1 on the first error. */
const checkProviders = (path: string): void => {
  const entries: unknown = JSON.parse(readFileSync(path, "utf8"))
  if (!Array.isArray(entries)) fail(`${path}: expected a JSON array of identity providers`)
  // The cast only names the shape: `make` decodes every entry itself and throws a RangeError naming a bad one.
  const registry = IdentityProviders.make(entries as Parameters<typeof IdentityProviders.make>[0])
  for (const provider of registry.all) {
    process.stdout.write(
      provider.kind !== "jwks"
        ? `${provider.name}  the native phone sign-in (built in)\n`
        : `${provider.name}  ${provider.issuer}  aud ${provider.audience}  ${provider.algorithms.join(",")}  id claim ${provider.subjectClaim}  ${provider.jwksUrl}\n`
    )
  }
}

/** The network `--network` names, from the networks file; exits 1 when there is none such. */
const selectedNetwork = async (paymasterAddressRequired: boolean): Promise<NetworkSettings> => {
  const names = values.network ?? []
  if (names.length !== 1) return fail("--network <name> is required, once")
  const [name = ""] = names
  const networks = await Effect.runPromise(networkSettingsFromEnv({ paymasterAddressRequired }))
  if (networks.length === 0) return fail("no networks: set WALLETGATE_NETWORKS_FILE (see docs/configuration.md)")
  return (
    findNetwork(networks, name) ??
    fail(`no network ${name} in the networks file (it has ${networks.map((network) => network.slug).join(", ")})`)
  )
}

/** An amount option (`--deposit "0.5 ether"`) in wei, or undefined when not given; exits 1 when malformed. */
const amountOption = (option: "deposit" | "stake"): bigint | undefined => {
  const text = values[option]
  if (text === undefined) return undefined
  try {
    return parseAmount(text)
  } catch {
    return fail(`--${option} is an amount with its unit, e.g. "0.5 ether" or "30 gwei"`)
  }
}

const deploy = async (): Promise<void> => {
  const settings = await selectedNetwork(false)
  const delay = values["unstake-delay"]
  if (delay !== undefined && !/^[1-9][0-9]{0,9}$/.test(delay)) fail("--unstake-delay is a whole number of seconds")
  const deployerKey = await Effect.runPromise(deployerKeyFromEnv)
  const report = await deployNetworkContracts(settings, {
    deployerKey,
    newPaymaster: values["new-paymaster"] === true,
    depositWei: amountOption("deposit"),
    stakeWei: amountOption("stake"),
    unstakeDelaySeconds: delay === undefined ? undefined : Number(delay)
  })
  process.stdout.write(`${deployTable(settings.slug, report)}\n`)
}

const doctor = async (): Promise<void> => {
  const settings = await selectedNetwork(false)
  const checks = await runDoctor(settings)
  const ok = checks.every((check) => check.status !== "fail")
  process.stdout.write(
    values.json === true
      ? `${JSON.stringify({ network: settings.slug, chainId: settings.chainId, ok, checks }, null, 2)}\n`
      : `${doctorTable(settings.slug, checks)}\n`
  )
  if (!ok) process.exit(1)
}

const main = async (): Promise<void> => {
  if (group === "contracts") {
    if (command !== "deploy") fail("unknown command")
    return deploy()
  }
  if (group === "doctor") {
    if (command !== undefined) fail("unknown command")
    return doctor()
  }
  if (group === "paymaster") {
    if (command !== "serve") fail("unknown command")
    const { app = [], window, port, host } = values
    return servePaymaster(await selectedNetwork(true), { apps: app, window, port, host })
  }
  if (group === "providers") {
    if (command !== "check") fail("unknown command")
    checkProviders(rest[0] ?? fail("the file is required"))
    return
  }
  switch (command) {
    case "create": {
      const networks = values.network ?? []
      const accounts = values.account ?? []
      const mode = (values.mode ?? "live") as ApiKeyMode
      if (networks.length === 0) fail("--network is required")
      if (accounts.length === 0) fail("--account is required")
      if (mode !== "live" && mode !== "test") fail("--mode is live or test")
      for (const account of accounts) if (!/^0x[0-9a-fA-F]{40}$/.test(account)) fail(`not an address: ${account}`)
      const { key, record } = await run(createApiKey({ mode, networks, accounts }))
      process.stdout.write(
        `created key ${record.id} (${record.mode}) for ${record.networks.join(", ")}: ${record.accounts.join(", ")}\n` +
          `${key}\nThis is the only time the key is shown. It is stored as a SHA-256 hash in ${file}.\n`
      )
      break
    }
    case "list": {
      const records = await run(listApiKeys)
      for (const record of records) {
        const state = record.revokedAt === undefined ? "active" : `revoked ${new Date(record.revokedAt).toISOString()}`
        const used =
          record.lastUsedAt === undefined ? "never used" : `last used ${new Date(record.lastUsedAt).toISOString()}`
        process.stdout.write(
          `${record.id}  ${record.mode}  ${state}  created ${new Date(record.createdAt).toISOString()}  ${used}  ` +
            `networks ${record.networks.join(",")}  accounts ${record.accounts.join(",")}\n`
        )
      }
      if (records.length === 0) process.stdout.write(`no keys in ${file}\n`)
      break
    }
    case "revoke": {
      const id = rest[0] ?? fail("the key id is required")
      const revoked = await run(revokeApiKey(id))
      if (!revoked) fail(`no active key ${id}`)
      process.stdout.write(`revoked key ${id}\n`)
      break
    }
    default:
      fail("unknown command")
  }
}

main().catch((error: unknown) => {
  // A failure while running (a node that refuses, a configuration error): its message, without the usage.
  process.stderr.write(`walletgate: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})
