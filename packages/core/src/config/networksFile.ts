import * as Schema from "effect/Schema"
import { type Address, getAddress, type Hex, parseUnits, zeroAddress } from "viem"
import type { NetworkConfig, PaymasterServiceConfig } from "../chain/networks"
import { AddressString } from "../chain/schemas"
import { paymasterContextProblem, paymasterServiceUrlProblem } from "../operations/paymasterService"

/** A network's slug: lower-case letters, digits and dashes, starting with a letter (`base-sepolia`). */
const Slug = Schema.String.check(
  Schema.isPattern(/^[a-z][a-z0-9-]{0,31}$/, {
    message: "Expected a slug: lower-case letters, digits and dashes, starting with a letter"
  })
)

const HttpUrl = Schema.String.check(
  Schema.isPattern(/^https?:\/\/[^\s]+$/, { message: "Expected an http(s) URL" }),
  Schema.makeFilter(
    (value: string) => {
      try {
        new URL(value)
        return true
      } catch {
        return false
      }
    },
    { message: "Expected an http(s) URL" }
  )
)

const wholeNumber = (minimum: number, maximum: number) =>
  Schema.Number.check(
    Schema.isInt({ message: `Expected a whole number from ${minimum} to ${maximum}` }),
    Schema.isBetween({ minimum, maximum }, { message: `Expected a whole number from ${minimum} to ${maximum}` })
  )

const amountPattern = /^([0-9]{1,30}(?:\.[0-9]{1,18})?) ?(wei|gwei|ether)$/

/** An amount of the native coin with its unit: `"30 gwei"`, `"0.5 ether"`, `"1000 wei"`. */
const Amount = Schema.String.check(
  Schema.isPattern(amountPattern, { message: 'Expected an amount with its unit, e.g. "30 gwei" or "0.5 ether"' })
)

/** The wei an {@link Amount} stands for. */
export const parseAmount = (amount: string): bigint => {
  const match = amountPattern.exec(amount)
  if (match === null) throw new RangeError(`not an amount: ${amount}`)
  const [, digits = "0", unit = "wei"] = match
  return parseUnits(digits, unit === "ether" ? 18 : unit === "gwei" ? 9 : 0)
}

/** A variable of the environment that holds a secret: `{ "env": "BASE_PAYMASTER_KEY" }`. */
const EnvReference = Schema.Struct({
  env: Schema.String.check(
    Schema.isPattern(/^[A-Z_][A-Z0-9_]{0,127}$/, { message: "Expected a variable name (A-Z, 0-9, _)" })
  )
})

/** A private key, in the file (the operator's choice) or, better, named by an environment variable. */
const SecretKey = Schema.Union([
  EnvReference,
  Schema.String.check(
    Schema.isPattern(/^0x[0-9a-fA-F]{64}$/, { message: "Expected a private key: 0x and 64 hex digits" })
  )
])

/** The operator's VerifyingPaymaster, whose signer key the gateway (or `walletgate paymaster serve`) holds. */
const VerifyingPaymasterEntry = Schema.Struct({
  /** The operator's VerifyingPaymaster; absent until `walletgate contracts deploy --new-paymaster` made it. */
  address: Schema.optionalKey(AddressString),
  signerKey: SecretKey,
  /** The deposit below which `walletgate doctor` fails and `GET /v1/health` is degraded; `contracts deploy` tops up to it. */
  minDeposit: Schema.optionalKey(Amount)
})

/** An ERC-7677 paymaster web service (a provider's, or `walletgate paymaster serve`) and the context sent to it. */
const PaymasterServiceEntry = Schema.Struct({
  url: Schema.String.check(
    Schema.makeFilter((value: string) => paymasterServiceUrlProblem(value) === undefined, {
      message: "Expected the service's URL: https, or http to localhost; at most 2048 characters"
    })
  ),
  context: Schema.optionalKey(
    Schema.Record(Schema.String, Schema.Unknown).check(
      Schema.makeFilter((value: object) => paymasterContextProblem(value) === undefined, {
        message: "Expected a JSON object of at most 4096 bytes"
      })
    )
  ),
  timeoutMs: Schema.optionalKey(wholeNumber(100, 120_000))
})

/** The spend policy's limits on one network (gas units; see `SpendLimitsOptions`). */
const SpendLimitsEntry = Schema.Struct({
  windowSeconds: Schema.optionalKey(wholeNumber(1, 604_800)),
  batchCeiling: Schema.optionalKey(wholeNumber(1, Number.MAX_SAFE_INTEGER)),
  payoutCeiling: Schema.optionalKey(wholeNumber(1, Number.MAX_SAFE_INTEGER)),
  perApp: Schema.optionalKey(wholeNumber(1, Number.MAX_SAFE_INTEGER)),
  perUser: Schema.optionalKey(wholeNumber(1, Number.MAX_SAFE_INTEGER)),
  perApiKey: Schema.optionalKey(wholeNumber(1, Number.MAX_SAFE_INTEGER)),
  perNetwork: Schema.optionalKey(wholeNumber(1, Number.MAX_SAFE_INTEGER))
})

/** One network of the file, as the operator writes it (see docs/networks.example.json). */
export const NetworkEntry = Schema.Struct({
  chainId: wholeNumber(1, Number.MAX_SAFE_INTEGER),
  /** Test networks accept blank `auth` from test-mode apps; default false. */
  testnet: Schema.optionalKey(Schema.Boolean),
  /** The node's endpoints: the first, then the others in turn when one fails. */
  rpcUrls: Schema.NonEmptyArray(HttpUrl),
  bundlerUrl: HttpUrl,
  /** Who sponsors: the operator's VerifyingPaymaster and its signer, or an ERC-7677 paymaster service; never both. */
  paymaster: Schema.optionalKey(Schema.Union([VerifyingPaymasterEntry, PaymasterServiceEntry])),
  confirmations: Schema.optionalKey(wholeNumber(1, 1_000)),
  feeCaps: Schema.optionalKey(
    Schema.Struct({ maxFeePerGas: Schema.optionalKey(Amount), maxPriorityFeePerGas: Schema.optionalKey(Amount) })
  ),
  spend: Schema.optionalKey(SpendLimitsEntry),
  pollingIntervalMs: Schema.optionalKey(wholeNumber(10, 60_000)),
  rpcTimeoutMs: Schema.optionalKey(wholeNumber(100, 120_000)),
  rpcDeadlineMs: Schema.optionalKey(wholeNumber(100, 120_000)),
  bundlerTimeoutMs: Schema.optionalKey(wholeNumber(100, 120_000)),
  /** walletgate's dust Sweeper contract here, read by the `/api` lookups when they are configured for this network. */
  sweeper: Schema.optionalKey(AddressString)
})

/** A network of the file, decoded. */
export type NetworkEntry = typeof NetworkEntry.Type

/** The networks file (`WALLETGATE_NETWORKS_FILE`) or variable (`WALLETGATE_NETWORKS`): networks by slug. */
export const NetworksFile = Schema.Struct({ networks: Schema.Record(Slug, NetworkEntry) })

/** For each field of an entry, what a valid one looks like (the examples of the configuration errors). */
export const networkFieldExamples: Readonly<Record<string, string>> = {
  networks:
    '{ "networks": { "base-sepolia": { "chainId": 84532, "rpcUrls": ["https://sepolia.base.org"], "bundlerUrl": "https://bundler.example.com/84532" } } }',
  chainId: '"chainId": 84532',
  testnet: '"testnet": true',
  rpcUrls: '"rpcUrls": ["https://sepolia.base.org", "https://base-sepolia-rpc.publicnode.com"]',
  bundlerUrl: '"bundlerUrl": "https://bundler.example.com/84532"',
  paymaster:
    '"paymaster": { "address": "0x1234567890AbcdEF1234567890aBcdef12345678", "signerKey": { "env": "BASE_SEPOLIA_PAYMASTER_KEY" }, "minDeposit": "0.5 ether" }, or an ERC-7677 service: "paymaster": { "url": "https://paymaster.example.com/84532", "context": { "policyId": "sp_walletgate" } }',
  confirmations: '"confirmations": 3',
  feeCaps: '"feeCaps": { "maxFeePerGas": "30 gwei", "maxPriorityFeePerGas": "2 gwei" }',
  spend: '"spend": { "windowSeconds": 3600, "batchCeiling": 1000000, "perUser": 3000000, "perApp": 30000000 }',
  pollingIntervalMs: '"pollingIntervalMs": 1000',
  rpcTimeoutMs: '"rpcTimeoutMs": 10000',
  rpcDeadlineMs: '"rpcDeadlineMs": 5000',
  bundlerTimeoutMs: '"bundlerTimeoutMs": 10000',
  sweeper: '"sweeper": "0x5FbDB2315678afecb367f032d93F642f64180aa3"'
}

/** A network's settings from the file, with its secrets read: the parts of `NetworkConfig` the file holds. */
export interface NetworkSettings
  extends Pick<
    NetworkConfig,
    | "slug"
    | "chainId"
    | "rpcUrl"
    | "fallbackRpcUrls"
    | "testnet"
    | "spend"
    | "pollingIntervalMs"
    | "rpcTimeoutMs"
    | "rpcDeadlineMs"
  > {
  readonly erc4337: NonNullable<NetworkConfig["erc4337"]>
  /** The paymaster as the file describes it, also when it has no address yet (before `contracts deploy`). */
  readonly paymaster:
    | { readonly address: Address | undefined; readonly signerKey: Hex; readonly minDepositWei: bigint | undefined }
    | undefined
  /** The ERC-7677 paymaster service the file names instead of a VerifyingPaymaster. */
  readonly paymasterService: PaymasterServiceConfig | undefined
  /** walletgate's dust Sweeper contract, when the file names one. */
  readonly sweeper: Address | undefined
}

/**
 * A decoded entry as the gateway takes it, given its slug and its paymaster's signer key (already read from the
 * environment when the file names a variable).
 */
export const toNetworkSettings = (slug: string, entry: NetworkEntry, signerKey: Hex | undefined): NetworkSettings => {
  const [rpcUrl, ...fallbackRpcUrls] = entry.rpcUrls
  const verifying = entry.paymaster !== undefined && "signerKey" in entry.paymaster ? entry.paymaster : undefined
  const service = entry.paymaster !== undefined && "url" in entry.paymaster ? entry.paymaster : undefined
  const paymasterService: PaymasterServiceConfig | undefined =
    service === undefined
      ? undefined
      : {
          url: service.url,
          ...(service.context === undefined ? {} : { context: service.context }),
          ...(service.timeoutMs === undefined ? {} : { timeoutMs: service.timeoutMs })
        }
  const paymaster =
    verifying === undefined || signerKey === undefined
      ? undefined
      : {
          address: verifying.address === undefined ? undefined : getAddress(verifying.address),
          signerKey,
          minDepositWei: verifying.minDeposit === undefined ? undefined : parseAmount(verifying.minDeposit)
        }
  const feeCaps = entry.feeCaps
  return {
    slug,
    chainId: entry.chainId,
    rpcUrl,
    ...(fallbackRpcUrls.length === 0 ? {} : { fallbackRpcUrls }),
    testnet: entry.testnet ?? false,
    ...(entry.spend === undefined ? {} : { spend: entry.spend }),
    ...(entry.pollingIntervalMs === undefined ? {} : { pollingIntervalMs: entry.pollingIntervalMs }),
    ...(entry.rpcTimeoutMs === undefined ? {} : { rpcTimeoutMs: entry.rpcTimeoutMs }),
    ...(entry.rpcDeadlineMs === undefined ? {} : { rpcDeadlineMs: entry.rpcDeadlineMs }),
    erc4337: {
      bundlerUrl: entry.bundlerUrl,
      ...(paymasterService !== undefined
        ? { paymasterService }
        : paymaster?.address === undefined
          ? {}
          : {
              paymaster: {
                address: paymaster.address,
                signerKey: paymaster.signerKey,
                // One low mark: the deposit doctor asks for is the one below which GET /v1/health is degraded.
                ...(paymaster.minDepositWei === undefined ? {} : { minDepositWei: paymaster.minDepositWei })
              }
            }),
      ...(entry.confirmations === undefined ? {} : { confirmations: entry.confirmations }),
      ...(entry.bundlerTimeoutMs === undefined ? {} : { bundlerTimeoutMs: entry.bundlerTimeoutMs }),
      ...(feeCaps === undefined
        ? {}
        : {
            feeCaps: {
              ...(feeCaps.maxFeePerGas === undefined ? {} : { maxFeePerGas: parseAmount(feeCaps.maxFeePerGas) }),
              ...(feeCaps.maxPriorityFeePerGas === undefined
                ? {}
                : { maxPriorityFeePerGas: parseAmount(feeCaps.maxPriorityFeePerGas) })
            }
          })
    },
    paymaster,
    paymasterService,
    sweeper: entry.sweeper === undefined ? undefined : getAddress(entry.sweeper)
  }
}

/**
 * A network of the file as the gateway serves it (`embeddedPorts({ networks })`). A network without a `sweeper` has
 * the zero address there: the `/api` lookups read the sweeper of the one network their settings name, and answer
 * `sweeper_not_configured` without settings.
 */
export const toNetworkConfig = ({
  paymaster: _paymaster,
  paymasterService: _paymasterService,
  sweeper,
  ...settings
}: NetworkSettings): NetworkConfig => ({
  ...settings,
  contracts: { sweeper: sweeper ?? zeroAddress }
})
