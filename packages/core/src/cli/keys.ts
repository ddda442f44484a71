// `walletgate keys …`: API keys of the automation interface (X-API-KEY), in the gateway's store (REDIS_URL), or in a
// key file (--file, WALLETGATE_KEYS_FILE) for a single process and the tests.
import * as Effect from "effect/Effect"
import type { CreatedKey, KeyView } from "../operator/schemas"
import { keyView } from "../operator/views"
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
import { argument, fail, type HelpTexts, type Invocation, output, SHOWN_ONCE, table, unknown } from "./common"
import { withOperator } from "./store"

const WHERE = `the store: the gateways' Redis (REDIS_URL, WALLETGATE_REDIS_KEY_PREFIX when the gateways set one), or with
  --file <path> (or WALLETGATE_KEYS_FILE when REDIS_URL is not set) a key file, which only a gateway of one process
  reading that file sees`

/** The help of `walletgate keys` and its commands. */
export const keysHelp: HelpTexts = {
  keys: `walletgate keys: API keys of the automation interface (X-API-KEY), kept hashed.

usage:
  walletgate keys create --network <n> [--network …] --account <address> [--account …] [--mode test|live] [--json]
  walletgate keys list [--json]
  walletgate keys revoke <key id> [--json]
${WHERE}`,
  "keys create": `walletgate keys create: makes an API key for automation accounts on networks, prints it once.

usage:
  walletgate keys create --network <n> [--network …] --account <address> [--account …] [--mode test|live] [--json]
options:
  --network <n>        a network the key may pay out on (repeat for several); on Redis one of the networks file
                       (WALLETGATE_NETWORKS_FILE or WALLETGATE_NETWORKS, as the gateways read it)
  --account <address>  an automation account the key may pay out from (repeat for several)
  --mode live|test     a live or a test key (default live)
  --file <path>        a key file instead of the gateways' Redis
  --json               { id, key, mode, networks, accounts, createdAt }
${WHERE}`,
  "keys list": `walletgate keys list: every key, without the keys themselves (id, mode, state, use).

usage:
  walletgate keys list [--file <path>] [--json]   (--json: [{ id, mode, networks, accounts, createdAt, lastUsedAt?,
                                                   revokedAt? }])
${WHERE}`,
  "keys revoke": `walletgate keys revoke: revokes a key by its id (as 'keys list' shows it); every gateway on the store
refuses it from now on.

usage:
  walletgate keys revoke <key id> [--json]     (--json: the key as 'keys list' shows it)
  walletgate keys revoke -- <key id>   (an id that begins with "-")
options:
  --file <path>   a key file instead of the gateways' Redis
${WHERE}`
}

/** What `keys` says when REDIS_URL is not set. */
const FILE_INSTEAD = "or --file <path> for a key file, which only a gateway of one process reading it sees"

/** The key file of this invocation, or none for the gateways' Redis. */
const keyFile = (invocation: Invocation): string | undefined => {
  if (invocation.values.file !== undefined) return invocation.values.file
  const fromEnv = process.env.WALLETGATE_KEYS_FILE
  if (fromEnv === undefined || fromEnv === "") return undefined
  if ((process.env.REDIS_URL ?? "") !== "") {
    // Which store is meant is not clear: a key made in the file would reach no gateway of the fleet.
    fail(
      "REDIS_URL and WALLETGATE_KEYS_FILE are both set: pass --file <path> for the file, or unset WALLETGATE_KEYS_FILE"
    )
  }
  return fromEnv
}

/** Runs a key-file effect; a file that cannot be read is named, never its content. */
const inFile = <A, E>(file: string, effect: Effect.Effect<A, E, ApiKeyStore | SecureRandom>) =>
  Effect.runPromise(
    effect.pipe(
      Effect.provide(apiKeyFileStore(file)),
      Effect.provide(SecureRandom.crypto),
      Effect.mapError((error) =>
        error instanceof StoreUnavailable
          ? new Error(`${file} cannot be read or written as a key file (a JSON array of key records)`)
          : error
      )
    )
  )

const keyRows = (keys: ReadonlyArray<KeyView>, empty: string) =>
  table(
    ["ID", "MODE", "STATE", "CREATED", "USE", "NETWORKS", "ACCOUNTS"],
    keys.map((key) => [
      key.id,
      key.mode,
      key.revokedAt === undefined ? "active" : `revoked ${key.revokedAt}`,
      key.createdAt,
      key.lastUsedAt === undefined ? "never used" : `last used ${key.lastUsedAt}`,
      key.networks.join(","),
      key.accounts.join(",")
    ]),
    empty
  )

const createKey = async (invocation: Invocation, file: string | undefined): Promise<CreatedKey> => {
  const networks = invocation.values.network ?? []
  const accounts = invocation.values.account ?? []
  const mode = invocation.values.mode ?? "live"
  if (networks.length === 0) fail("--network is required")
  if (accounts.length === 0) fail("--account is required")
  if (mode !== "live" && mode !== "test") fail("--mode is live or test")
  for (const account of accounts) if (!/^0x[0-9a-fA-F]{40}$/.test(account)) fail(`not an address: ${account}`)
  const options = { mode: mode as ApiKeyMode, networks, accounts }
  if (file === undefined) {
    return withOperator({ networks: "required", otherwise: FILE_INSTEAD }, (operator, call) =>
      operator.createKey(call, options)
    )
  }
  const { key, record } = await inFile(file, createApiKey(options))
  return { ...keyView(record), key }
}

/** Runs `walletgate keys <command>`. */
export const runKeys = async (invocation: Invocation): Promise<void> => {
  const file = keyFile(invocation)
  switch (invocation.positionals[1]) {
    case "create": {
      const created = await createKey(invocation, file)
      return output(invocation, created, () =>
        [
          `created key ${created.id} (${created.mode}) for ${created.networks.join(", ")}: ${created.accounts.join(", ")}`,
          created.key,
          `${SHOWN_ONCE}${file === undefined ? "" : ` (in ${file})`}`
        ].join("\n")
      )
    }
    case "list": {
      const keys =
        file === undefined
          ? await withOperator({ otherwise: FILE_INSTEAD }, (operator) => operator.listKeys)
          : (await inFile(file, listApiKeys)).map(keyView)
      return output(invocation, keys, () => keyRows(keys, file === undefined ? "no keys" : `no keys in ${file}`))
    }
    case "revoke": {
      const id = argument(invocation, "the key id")
      if (file === undefined) {
        const revoked = await withOperator({ otherwise: FILE_INSTEAD }, (operator, call) =>
          operator.revokeKey(call, id)
        )
        return output(invocation, revoked, () => `revoked key ${id}`)
      }
      if (!(await inFile(file, revokeApiKey(id)))) fail(`no active key ${id}`)
      const revoked = (await inFile(file, listApiKeys)).find((record) => record.id === id)
      return output(invocation, revoked === undefined ? { id } : keyView(revoked), () => `revoked key ${id}`)
    }
    default:
      return unknown("keys", invocation)
  }
}
