import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { Hex } from "viem"
import type { NetworkConfig } from "../chain/networks"
import { resolveSpendLimits } from "../chain/spendLimits"
import { fieldProblems } from "../http/route"
import {
  type NetworkSettings,
  NetworksFile,
  networkFieldExamples,
  toNetworkConfig,
  toNetworkSettings
} from "./networksFile"
import { ConfigurationError, read, type SettingDoc } from "./read"

// The networks' settings (and the deployer's key): chain code, in a module of its own so that a bundle of a function
// that reads no network (phone sign-in alone) does not keep it.

const networksFileDoc: SettingDoc = {
  name: "WALLETGATE_NETWORKS_FILE",
  expected: "the path of a JSON file of networks (docs/networks.example.json)",
  example: "/etc/walletgate/networks.json"
}

/** Where the networks come from: a file (`WALLETGATE_NETWORKS_FILE`), the variable itself (`WALLETGATE_NETWORKS`), or none. */
const networksSource: Effect.Effect<
  { readonly setting: string; readonly where: string; readonly text: string } | undefined,
  ConfigurationError
> = Effect.gen(function* () {
  const path = yield* read(Config.option(Config.NonEmptyString("WALLETGATE_NETWORKS_FILE")), networksFileDoc)
  const inline = yield* read(Config.option(Config.NonEmptyString("WALLETGATE_NETWORKS")), {
    name: "WALLETGATE_NETWORKS",
    expected: "the networks as JSON, as the file holds them",
    example: `'${networkFieldExamples.networks}'`
  })
  if (Option.isSome(path) && Option.isSome(inline)) {
    return yield* Effect.fail(
      new ConfigurationError(
        "WALLETGATE_NETWORKS",
        "WALLETGATE_NETWORKS and WALLETGATE_NETWORKS_FILE are both set: keep one, for example WALLETGATE_NETWORKS_FILE=/etc/walletgate/networks.json"
      )
    )
  }
  if (Option.isSome(inline)) return { setting: "WALLETGATE_NETWORKS", where: "WALLETGATE_NETWORKS", text: inline.value }
  if (Option.isNone(path)) return undefined
  const file = path.value
  return yield* Effect.try({
    try: () => ({
      setting: "WALLETGATE_NETWORKS_FILE",
      where: `WALLETGATE_NETWORKS_FILE (${file})`,
      // Not an ES module import of node:fs: Node's ES module face of it reads every export, `promises` among them,
      // which loads fs/promises and readline at every start (milliseconds of a Lambda cold start) for one file read.
      text: process.getBuiltinModule("node:fs").readFileSync(file, "utf8")
    }),
    catch: (error) =>
      new ConfigurationError(
        "WALLETGATE_NETWORKS_FILE",
        `WALLETGATE_NETWORKS_FILE (${file}) could not be read (${(error as NodeJS.ErrnoException).code ?? "error"}): expected ${networksFileDoc.expected}, for example WALLETGATE_NETWORKS_FILE=${networksFileDoc.example}`
      )
  })
})

/** The example shown for a problem at `path` (a JSON Pointer into the file): the field's, else the whole file's. */
const exampleAt = (path: string): string => {
  // /networks/<slug>/<field>/…
  const field = path.split("/")[3]
  return networkFieldExamples[field ?? ""] ?? networkFieldExamples.networks ?? ""
}

/** Options of {@link networkSettingsFromEnv}. */
export interface NetworkSettingsOptions {
  /**
   * Whether a network with a paymaster must name its address (the gateway: yes; `walletgate contracts deploy`,
   * which makes the paymaster, no).
   */
  readonly paymasterAddressRequired: boolean
}

/**
 * The networks of `WALLETGATE_NETWORKS_FILE` (a JSON file) or `WALLETGATE_NETWORKS` (the same JSON in the variable),
 * decoded by {@link NetworksFile}, with each paymaster signer key read from the variable the file names (or from the
 * file, when the operator put it there); none when neither is set. Anything unusable fails with a
 * {@link ConfigurationError} naming the file, the path inside it, what is wrong and an example; never a secret's value.
 */
export const networkSettingsFromEnv = (
  options: NetworkSettingsOptions
): Effect.Effect<ReadonlyArray<NetworkSettings>, ConfigurationError> =>
  Effect.gen(function* () {
    const source = yield* networksSource
    if (source === undefined) return []
    const invalid = (path: string, what: string) =>
      new ConfigurationError(
        source.setting,
        `${source.where} is invalid at ${path}: ${what}; for example ${exampleAt(path)} (docs/configuration.md)`
      )
    let json: unknown
    try {
      json = JSON.parse(source.text)
    } catch (error) {
      // Only where the syntax breaks: the parser's message may quote the text, and the text may hold a key.
      const at = /position \d+(?: \(line \d+ column \d+\))?/.exec(error instanceof Error ? error.message : "")
      return yield* Effect.fail(invalid("/", `not JSON (${at === null ? "a syntax error" : at[0]})`))
    }
    const decoded = Schema.decodeUnknownResult(NetworksFile)(json, { errors: "all", onExcessProperty: "error" })
    if (Result.isFailure(decoded)) {
      const problems = fieldProblems(decoded.failure.issue)
      const first = problems[0]
      const more =
        problems.length > 1
          ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? "s" : ""}: ${problems
              .slice(1, 4)
              .map((problem) => `${problem.path || "/"}: ${problem.message}`)
              .join("; ")})`
          : ""
      return yield* Effect.fail(invalid(first?.path || "/", `${first?.message ?? "invalid"}${more}`))
    }
    const networks: Array<NetworkSettings> = []
    for (const [slug, entry] of Object.entries(decoded.success.networks)) {
      const pointer = `/networks/${slug}`
      let signerKey: Hex | undefined
      if (entry.paymaster !== undefined && "signerKey" in entry.paymaster) {
        if (options.paymasterAddressRequired && entry.paymaster.address === undefined) {
          return yield* Effect.fail(
            invalid(
              `${pointer}/paymaster/address`,
              "Required: the gateway sponsors through the paymaster at this address (walletgate contracts deploy --network <name> --new-paymaster makes one)"
            )
          )
        }
        const key = entry.paymaster.signerKey
        signerKey =
          typeof key === "string"
            ? (key as Hex)
            : (Redacted.value(
                yield* read(Config.schema(Schema.Redacted(PrivateKeyText), key.env), {
                  name: key.env,
                  expected: "a private key, 0x and 64 hex digits (secret)",
                  example: "<the paymaster signer's key, from a secrets manager>",
                  secret: true,
                  neededBy: `${source.where} names it at ${pointer}/paymaster/signerKey`
                })
                // Checked by PrivateKeyText: 0x and 64 hex digits.
              ) as Hex)
      }
      const settings = toNetworkSettings(slug, entry, signerKey)
      try {
        resolveSpendLimits(slug, settings.testnet, settings.spend)
      } catch (error) {
        return yield* Effect.fail(
          invalid(`${pointer}/spend`, error instanceof Error ? error.message : "invalid limits")
        )
      }
      if (networks.some((network) => network.chainId === settings.chainId)) {
        return yield* Effect.fail(
          invalid(`${pointer}/chainId`, `chain id ${settings.chainId} is already another network's`)
        )
      }
      networks.push(settings)
    }
    return networks
  })

/**
 * The networks the gateway serves, from `WALLETGATE_NETWORKS_FILE` or `WALLETGATE_NETWORKS` (as
 * {@link networkSettingsFromEnv} reads them; a paymaster must name its address): each with its RPC endpoints, bundler,
 * paymaster, confirmations, fee caps and spend limits, for `embeddedPorts({ networks })`; none when neither is set.
 */
export const gatewayNetworksFromEnv: Effect.Effect<
  ReadonlyArray<NetworkConfig>,
  ConfigurationError
> = networkSettingsFromEnv({ paymasterAddressRequired: true }).pipe(
  Effect.map((networks) => networks.map(toNetworkConfig))
)

const PrivateKeyText = Schema.String.check(Schema.isPattern(/^0x[0-9a-fA-F]{64}$/))

/**
 * The key of the operator's account that `walletgate contracts deploy` sends from (it pays for the deployments and
 * owns the paymaster): `WALLETGATE_DEPLOYER_KEY`, a private key (secret).
 */
export const deployerKeyFromEnv: Effect.Effect<Hex, ConfigurationError> = read(
  Config.schema(Schema.Redacted(PrivateKeyText), "WALLETGATE_DEPLOYER_KEY"),
  {
    name: "WALLETGATE_DEPLOYER_KEY",
    expected:
      "the operator's private key, 0x and 64 hex digits (secret): it pays for the deployments and owns the paymaster",
    example: "<the operator's key, from a secrets manager>",
    secret: true,
    neededBy: "walletgate contracts deploy sends from it"
  }
).pipe(Effect.map((key) => Redacted.value(key) as Hex))
