import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import {
  type Address,
  type Chain,
  defineChain,
  fallback,
  type Hex,
  http,
  type LocalAccount,
  type Transport
} from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { chainIdOfName } from "./chainNames"
import { ChainUnavailable } from "./errors"
import { createNetworkClient, type NetworkClient } from "./networkClient"
import { resolveSpendLimits, type SpendLimits, type SpendLimitsOptions } from "./spendLimits"

/** Addresses of walletgate's own contracts on a network (the ERC-4337 and Safe contracts sit at canonical addresses). */
export interface ChainContracts {
  /** Buys holders' dust tokens for ETH at the operator's rates. */
  readonly sweeper: Address
}

/** An ERC-7677 paymaster service of a network, as configured. */
export interface PaymasterServiceConfig {
  /** Its JSON-RPC endpoint: https, or http to this machine (`localhost`, `127.0.0.1`, `[::1]`). */
  readonly url: string
  /** The `context` sent with every request (the service's policy id, app name, …): a small JSON object. */
  readonly context?: Readonly<Record<string, unknown>>
  /** How long to wait for one answer; default 10 s. */
  readonly timeoutMs?: number
}

/**
 * A network's ERC-4337 settings: its bundler, who pays the gas, and when an operation is final. Who pays is one of: the
 * operator's VerifyingPaymaster (`paymaster`), an ERC-7677 paymaster service (`paymasterService`), or, with neither,
 * each Safe itself; never both.
 */
export type Erc4337Config = Erc4337Common &
  (
    | {
        /**
         * The operator's VerifyingPaymaster (EntryPoint v0.7) and the key the gateway signs sponsorships with; without
         * one, each Safe pays its own gas.
         */
        readonly paymaster?: {
          readonly address: Address
          readonly signerKey: Hex
          /** Below this deposit at the EntryPoint (wei) the paymaster is low: `GET /v1/health` is degraded; default 0.05 ETH. */
          readonly minDepositWei?: bigint
        }
        readonly paymasterService?: never
      }
    | {
        readonly paymaster?: never
        /** An ERC-7677 paymaster web service (a provider's, or `walletgate paymaster serve`) that sponsors instead. */
        readonly paymasterService: PaymasterServiceConfig
      }
  )

/** The settings of {@link Erc4337Config} whoever pays. */
export interface Erc4337Common {
  /** Any ERC-7769 endpoint (a hosted bundler, or alto). */
  readonly bundlerUrl: string
  /** Blocks on top of (and including) an operation's block before it is final; default 1. */
  readonly confirmations?: number
  /** How long to wait for one bundler answer; default 10 s. */
  readonly bundlerTimeoutMs?: number
  /** The most the gateway offers per gas for an operation (wei); none: what the node suggests. */
  readonly feeCaps?: FeeCaps
}

/**
 * Ceilings on the fees offered per gas (wei): the offer is lowered to them; while the base fee alone is above
 * `maxFeePerGas`, no operation is signed (`GasPriceAboveCap`).
 */
interface FeeCaps {
  readonly maxFeePerGas?: bigint
  readonly maxPriorityFeePerGas?: bigint
}

/** A network's ERC-4337 settings, resolved. */
export interface Erc4337Settings {
  readonly bundlerUrl: string
  readonly bundlerTimeoutMs: number
  /**
   * Who signs sponsorships at which paymaster, and below which deposit it is low; or the paymaster service asked for
   * them; absent: the Safe pays its own gas.
   */
  readonly sponsor:
    | {
        readonly kind: "verifying"
        readonly paymaster: Address
        readonly signer: LocalAccount
        readonly minDepositWei: bigint
      }
    | { readonly kind: "service"; readonly service: PaymasterServiceConfig }
    | undefined
  readonly confirmations: number
  readonly feeCaps: FeeCaps
}

/** How a network is configured: where its node is, walletgate's contracts on it, and its ERC-4337 pipeline. */
export interface NetworkConfig {
  /** The slug clients use (`mainnet`, `base`, `sepolia`, `anvil`, …). */
  readonly slug: string
  readonly chainId: number
  readonly rpcUrl: string
  /** Further RPC endpoints, tried in order when `rpcUrl` fails (viem's `fallback` transport). */
  readonly fallbackRpcUrls?: ReadonlyArray<string>
  /** Test networks accept blank `auth` from test-mode apps; live networks never do. */
  readonly testnet: boolean
  readonly contracts: ChainContracts
  /** How often to poll for receipts; default 1000 ms (a local node: 20 ms). */
  readonly pollingIntervalMs?: number
  /** How long to wait for one RPC answer (one try of viem's transport, which tries 3 times); default 10 s. */
  readonly rpcTimeoutMs?: number
  /**
   * The overall deadline of one chain request, every try included; default 5 s. `GET /v1/health` waits at
   * most the smaller of this and {@link HEALTH_DEADLINE_MS}. The wait for a receipt has its own bound.
   */
  readonly rpcDeadlineMs?: number
  /** Where user operations go (the bundler, the paymaster, confirmations); absent: the network has no pipeline. */
  readonly erc4337?: Erc4337Config
  /** The gas walletgate pays here: ceilings and budgets; defaults depend on `testnet` (see `resolveSpendLimits`). */
  readonly spend?: SpendLimitsOptions
}

/** The longest `GET /v1/health` waits for a node or a bundler. */
export const HEALTH_DEADLINE_MS = 2_000

/** A network the gateway serves, with its clients. */
export interface Network {
  readonly slug: string
  readonly chainId: number
  readonly testnet: boolean
  readonly contracts: ChainContracts
  /** The client of the network's node: the reads the gateway makes ({@link NetworkClient}). */
  readonly publicClient: NetworkClient
  /** The overall deadline of one chain request on this network (see {@link NetworkConfig.rpcDeadlineMs}). */
  readonly rpcDeadlineMs: number
  /** The ERC-4337 pipeline's settings, when the network has one. */
  readonly erc4337: Erc4337Settings | undefined
  /** The spend policy's limits on this network. */
  readonly spend: SpendLimits
}

/** The `chain` of a request: a slug, or a chain id in decimal. */
export const ChainParam = Schema.String.check(
  Schema.isPattern(/^(?:[a-z][a-z0-9-]{0,31}|[1-9][0-9]{0,15})$/, {
    message: "Expected a network slug or decimal chain id"
  })
)

/** The networks this gateway serves. */
export class Networks extends Context.Service<
  Networks,
  {
    /** The network named by a slug, a decimal chain id or an EIP-3770 short name (`CHAIN_NAMES`), if served. */
    readonly resolve: (chain: string) => Network | undefined
    readonly all: ReadonlyArray<Network>
  }
>()("@walletgate/core/Networks") {
  /** Serves the configured networks (none: every chain is `unsupported_chain`). */
  static readonly layer = (configs: ReadonlyArray<NetworkConfig>): Layer.Layer<Networks> => {
    // Checked at once, so that a wrong limit stops the gateway where it is configured (a `RangeError`).
    const checked = configs.map((config) => ({
      config,
      spend: resolveSpendLimits(config.slug, config.testnet, config.spend)
    }))
    return Layer.sync(Networks, () => {
      const all = checked.map(({ config, spend }) => toNetwork(config, spend))
      return Networks.of({ all, resolve: (chain) => findNetwork(all, chain) })
    })
  }
}

/**
 * The network of `networks` named by `chain`: its slug, its decimal chain id, or an EIP-3770 short name
 * (`CHAIN_NAMES`) of its chain id. The gateway's requests and the CLI's `--network` find networks this one way.
 */
export const findNetwork = <N extends { readonly slug: string; readonly chainId: number }>(
  networks: ReadonlyArray<N>,
  chain: string
): N | undefined =>
  networks.find((network) => network.slug === chain || String(network.chainId) === chain) ??
  networks.find((network) => network.chainId === chainIdOfName(chain))

/**
 * The transport of a network's node: `rpcUrl` alone (3 tries), or with `fallbackRpcUrls` viem's `fallback`: each
 * endpoint tried once in order, the next when one fails or times out, the whole round 3 times. Calls made together
 * (the reads that prepare an operation run at once) go in one JSON-RPC batch: one round trip.
 */
export const networkTransport = (
  config: Pick<NetworkConfig, "rpcUrl" | "fallbackRpcUrls" | "rpcTimeoutMs">
): Transport => {
  const timeout = config.rpcTimeoutMs ?? 10_000
  const fallbacks = config.fallbackRpcUrls ?? []
  if (fallbacks.length === 0) return http(config.rpcUrl, { timeout, retryCount: 2, batch: true })
  return fallback(
    [config.rpcUrl, ...fallbacks].map((url) => http(url, { timeout, retryCount: 0, batch: true })),
    { retryCount: 2 }
  )
}

/** viem's description of a configured network's chain (its RPC URLs). */
export const networkChain = (config: Pick<NetworkConfig, "slug" | "chainId" | "rpcUrl" | "fallbackRpcUrls">): Chain =>
  defineChain({
    id: config.chainId,
    name: config.slug,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [config.rpcUrl, ...(config.fallbackRpcUrls ?? [])] } }
  })

const toNetwork = (config: NetworkConfig, spend: SpendLimits): Network => {
  const chain = networkChain(config)
  const transport = networkTransport(config)
  return {
    slug: config.slug,
    chainId: config.chainId,
    testnet: config.testnet,
    contracts: config.contracts,
    publicClient: createNetworkClient({ chain, transport, pollingInterval: config.pollingIntervalMs ?? 1000 }),
    rpcDeadlineMs: config.rpcDeadlineMs ?? 5_000,
    erc4337: config.erc4337 === undefined ? undefined : erc4337Settings(config.slug, config.erc4337),
    spend
  }
}

const erc4337Settings = (slug: string, config: Erc4337Config): Erc4337Settings => {
  const confirmations = config.confirmations ?? 1
  if (!Number.isInteger(confirmations) || confirmations < 1 || confirmations > 1_000) {
    throw new RangeError(`network ${slug}: erc4337.confirmations must be a whole number from 1 to 1000`)
  }
  return {
    bundlerUrl: config.bundlerUrl,
    bundlerTimeoutMs: config.bundlerTimeoutMs ?? 10_000,
    sponsor:
      config.paymasterService !== undefined
        ? { kind: "service", service: config.paymasterService }
        : config.paymaster === undefined
          ? undefined
          : {
              kind: "verifying",
              paymaster: config.paymaster.address,
              signer: privateKeyToAccount(config.paymaster.signerKey),
              minDepositWei: config.paymaster.minDepositWei ?? 50_000_000_000_000_000n
            },
    confirmations,
    feeCaps: config.feeCaps ?? {}
  }
}

/** The bundler endpoints of the networks that have an ERC-4337 pipeline (for `Bundler.jsonRpc`). */
export const bundlerEndpoints = (networks: ReadonlyArray<Network>) =>
  networks.flatMap((network) =>
    network.erc4337 === undefined
      ? []
      : [{ chainId: network.chainId, url: network.erc4337.bundlerUrl, timeoutMs: network.erc4337.bundlerTimeoutMs }]
  )

/**
 * Bounds a chain request by `deadlineMs` (default: the network's), retries included: past it the request
 * fails with {@link ChainUnavailable} and is no longer waited for (what it holds, such as a lock, is freed).
 */
export const withinDeadline =
  (network: Network, what: string, deadlineMs: number = network.rpcDeadlineMs) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | ChainUnavailable, R> =>
    self.pipe(
      Effect.timeoutOrElse({
        duration: deadlineMs,
        orElse: () =>
          Effect.fail(
            new ChainUnavailable({ network: network.slug, cause: `${what}: no answer within ${deadlineMs} ms` })
          )
      })
    )

/** Runs an RPC promise as an Effect that fails with {@link ChainUnavailable}, within the network's deadline. */
export const rpc = <A>(network: Network, what: string, call: () => Promise<A>, deadlineMs?: number) =>
  Effect.tryPromise({
    try: call,
    catch: (error) =>
      new ChainUnavailable({
        network: network.slug,
        cause: `${what}: ${describeRpcError(error)}`
      })
  }).pipe(withinDeadline(network, what, deadlineMs))

/** The name and short message of a viem error: what the node said, never a key (viem puts no key in errors). */
const describeRpcError = (error: unknown): string => {
  if (!(error instanceof Error)) return "error"
  const short = (error as { shortMessage?: unknown }).shortMessage
  return typeof short === "string" ? `${error.name}: ${short}` : error.name
}
