#!/usr/bin/env node
// `walletgate keys create|list|revoke`: API keys of the automation interface, for operators.
// `walletgate providers check <file>`: the identity providers a deployment would register, checked before it starts.
import { readFileSync } from "node:fs"
import { parseArgs } from "node:util"
import * as Effect from "effect/Effect"
import { IdentityProviders } from "../auth/IdentityProviders"
import {
  type ApiKeyMode,
  type ApiKeyStore,
  apiKeyFileStore,
  createApiKey,
  listApiKeys,
  revokeApiKey
} from "../payout/ApiKeys"
import { SecureRandom } from "../random/SecureRandom"

const USAGE = `usage:
  walletgate keys create --network <slug> [--network …] --account <address> [--account …] [--mode live|test]
  walletgate keys list
  walletgate keys revoke <key id>     (an id that begins with "-": walletgate keys revoke -- <key id>)
  walletgate providers check <file>   (a JSON array of { name, issuer, audience, jwksUrl, algorithms, subjectClaim? },
                                       as WALLETGATE_IDENTITY_PROVIDERS holds it)
options:
  --file <path>   the key file (default: $WALLETGATE_KEYS_FILE or ./walletgate-keys.json)`

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
if (group !== "keys" && group !== "providers") fail("unknown command")

const run = <A, E>(effect: Effect.Effect<A, E, ApiKeyStore | SecureRandom>) =>
  Effect.runPromise(effect.pipe(Effect.provide(apiKeyFileStore(file)), Effect.provide(SecureRandom.crypto)))

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

const main = async (): Promise<void> => {
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

main().catch((error: unknown) => fail(error instanceof Error ? error.message : String(error)))
