// The operator module of the CLI over the gateway's store: the Redis of REDIS_URL (under the gateways' key prefix),
// reached through @walletgate/redis, loaded at run time so that the core does not depend on it. Without REDIS_URL a
// command that needs the shared store fails naming it: never a store in this process's memory, which no gateway reads.
import { hostname, userInfo } from "node:os"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import type { ClientStore } from "../auth/ClientStore"
import { IdentityProviders } from "../auth/IdentityProviders"
import { Networks } from "../chain/networks"
import {
  identityProvidersFromEnv,
  optionalMasterSecretFromEnv,
  redisKeyPrefixFromEnv,
  redisUrlFromEnv
} from "../config/env"
import { gatewayNetworksFromEnv } from "../config/networksEnv"
import { KeyVault } from "../operations/KeyVault"
import { SpendPolicy } from "../operations/SpendPolicy"
import type { AuditLog } from "../operator/AuditLog"
import { operatorProblems } from "../operator/errors"
import { Operator } from "../operator/Operator"
import type { OperatorCall } from "../operator/schemas"
import type { ApiKeyStore } from "../payout/ApiKeys"
import type { AutomationAccounts } from "../payout/accounts"
import { SecureRandom } from "../random/SecureRandom"
import type { GasLedger } from "../state/GasLedger"
import { fail } from "./common"

/** The package the CLI reaches Redis through; not a dependency of the core (loaded at run time). */
const REDIS_PACKAGE = "@walletgate/redis"

/** What the CLI uses of `@walletgate/redis`: `RedisStores.layer` (its other ports are not read). */
interface RedisModule {
  readonly RedisStores: {
    readonly layer: (options: {
      readonly url: string
      readonly keyPrefix?: string
    }) => Layer.Layer<ClientStore | ApiKeyStore | AutomationAccounts | AuditLog | GasLedger>
  }
}

/** `@walletgate/redis`, or a failure saying to install it. */
const loadRedis = async (): Promise<RedisModule> => {
  let loaded: unknown
  try {
    // A name in a variable: neither TypeScript nor the bundler follows it, so the core neither types against nor
    // bundles the Redis package; Node resolves it from the installation at run time.
    loaded = await import(REDIS_PACKAGE)
  } catch (error) {
    const code = (error as { code?: unknown } | undefined)?.code
    if (code === "ERR_MODULE_NOT_FOUND" && String((error as Error).message).includes(REDIS_PACKAGE)) {
      return fail(
        `REDIS_URL is set but ${REDIS_PACKAGE} is not installed: the CLI reaches the gateway's Redis through it (npm install ${REDIS_PACKAGE})`
      )
    }
    throw error
  }
  const stores = (loaded as { RedisStores?: { layer?: unknown } }).RedisStores
  if (typeof stores?.layer !== "function") return fail(`${REDIS_PACKAGE} has no RedisStores.layer: update it`)
  // Checked above: the module has `RedisStores.layer`, the function of the type.
  return loaded as RedisModule
}

/** What a command needs besides the store, read from the environment only then (as the gateway reads it). */
export interface Needs {
  /**
   * The networks of WALLETGATE_NETWORKS_FILE or WALLETGATE_NETWORKS: `required` (keys create, accounts register: fails
   * when none is configured) or `optional` (budgets: the use on each network configured).
   */
  readonly networks?: "required" | "optional"
  /** WALLETGATE_MASTER_SECRET, for the Safe addresses of automation accounts (accounts register). */
  readonly masterSecret?: boolean
  /** WALLETGATE_IDENTITY_PROVIDERS, the providers an app may be granted (apps create, apps providers --grant). */
  readonly providers?: boolean
  /** Another store the command can use, said when REDIS_URL is not set (keys: a key file). */
  readonly otherwise?: string
}

const run = <A, E>(effect: Effect.Effect<A, E>): Promise<A> => Effect.runPromise(effect)

/** The vault of a command that derives no key: never asked (only `accounts register` derives). */
const noVault = Layer.succeed(
  KeyVault,
  KeyVault.of({ owner: () => Effect.die(new Error("WALLETGATE_MASTER_SECRET was not read for this command")) })
)

/** The CLI's user and host, as the audit log records them (`cli:<user>@<host>`). */
const cliCall = (): OperatorCall => {
  let user: string
  try {
    user = userInfo().username
  } catch {
    // A user with no entry in the password database (some containers).
    user = process.env.USER ?? process.env.LOGNAME ?? `uid-${process.getuid?.() ?? "unknown"}`
  }
  return { actor: { kind: "cli", user, host: hostname() } }
}

/** Says what went wrong in an operator call, never a secret: its problem's detail and stable code. */
const explain = (error: { readonly _tag: string }): string => {
  switch (error._tag) {
    case "AppNotFound":
    case "ApiKeyNotFound":
    case "InvalidOperatorInput":
    case "UnknownIdentityProvider": {
      const slice = operatorProblems[error._tag as keyof typeof operatorProblems]
      // The slice of the error's own tag: the cast pairs them.
      const detail = (slice.detail as (e: unknown) => string)(error)
      const named =
        "clientId" in error
          ? ` (${String(error.clientId)})`
          : "id" in error
            ? ` (${String(error.id)})`
            : "providers" in error
              ? ` (${String(error.providers)}; the deployment's are WALLETGATE_IDENTITY_PROVIDERS's and phone, tel)`
              : ""
      return `${detail}${named} [${slice.code}]`
    }
    case "UnsupportedChain":
      return `no network ${String((error as { chain?: unknown }).chain)} in the networks file (WALLETGATE_NETWORKS_FILE or WALLETGATE_NETWORKS) [unsupported_chain]`
    case "StoreUnavailable":
      return `the store did not answer (${String((error as { operation?: unknown }).operation)}): is the Redis of REDIS_URL reachable? [store_unavailable]`
    default:
      return `failed: ${error._tag}`
  }
}

/**
 * Runs `program` with the operator module over the gateway's Redis and the call of this CLI user; an operator error
 * fails the command with its detail. Fails naming REDIS_URL when it is not set.
 */
export const withOperator = async <A, E extends { readonly _tag: string }>(
  needs: Needs,
  program: (operator: Operator["Service"], call: OperatorCall) => Effect.Effect<A, E>
): Promise<A> => {
  const url = await run(redisUrlFromEnv)
  if (Option.isNone(url)) {
    return fail(
      "REDIS_URL is not set: this command works on the gateway's store, the Redis its instances share " +
        "(set REDIS_URL=redis://… or rediss://…, and WALLETGATE_REDIS_KEY_PREFIX when the gateways set one)" +
        (needs.otherwise === undefined ? "" : `; ${needs.otherwise}`)
    )
  }
  const keyPrefix = await run(redisKeyPrefixFromEnv)
  const providers = needs.providers === true ? await run(identityProvidersFromEnv) : []
  const networks = needs.networks === undefined ? [] : await run(gatewayNetworksFromEnv)
  if (needs.networks === "required" && networks.length === 0) {
    fail("no networks: set WALLETGATE_NETWORKS_FILE (or WALLETGATE_NETWORKS) as the gateways have it")
  }
  let vault = noVault
  if (needs.masterSecret === true) {
    const secret = await run(optionalMasterSecretFromEnv)
    if (Option.isNone(secret)) {
      return fail(
        "WALLETGATE_MASTER_SECRET is not set: the account's address derives from the gateways' master secret (the same value)"
      )
    }
    vault = KeyVault.derived(secret.value)
  }
  const redis = await loadRedis()
  const stores = redis.RedisStores.layer({
    url: url.value.href,
    ...(Option.isSome(keyPrefix) ? { keyPrefix: keyPrefix.value } : {})
  })
  const operator = Operator.layer.pipe(
    Layer.provide(
      Layer.mergeAll(
        stores,
        SpendPolicy.layer.pipe(Layer.provide(stores)),
        IdentityProviders.layer(providers),
        Networks.layer(networks),
        vault,
        SecureRandom.crypto
      )
    )
  )
  const call = cliCall()
  const outcome = await Effect.runPromise(
    Effect.result(
      Effect.gen(function* () {
        return yield* program(yield* Operator, call)
      })
    ).pipe(
      Effect.provide(operator),
      // What the stores log (Redis unreachable, a failed call) goes to stderr: stdout holds the command's output only.
      Effect.provide(Logger.layer([Logger.withConsoleError(Logger.formatLogFmt)]))
    )
  )
  return outcome._tag === "Success" ? outcome.success : fail(explain(outcome.failure))
}
