import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import {
  type Abi,
  type AbiFunction,
  type Address,
  type ContractFunctionParameters,
  encodeFunctionData,
  erc20Abi,
  type Hex
} from "viem"
import { sweeperArtifact } from "../chain/artifacts"
import { ChainUnavailable } from "../chain/errors"
import { type MulticallRoute, makeMulticallRoutes } from "../chain/multicall3"
import { type Network, rpc } from "../chain/networks"

/** A token's own `symbol()` and `decimals()`; `undefined` where the contract's answer cannot be decoded. */
export interface TokenMetadata {
  readonly symbol: string | undefined
  readonly decimals: number | undefined
}

/** One token of a holder: balance and allowance to the sweeper in base units, and the token's metadata. */
export interface TokenHolding extends TokenMetadata {
  readonly token: Address
  readonly balance: bigint
  readonly allowance: bigint
}

/** What one address holds, read in one block. */
export interface Holdings {
  /** The block every value was read in. */
  readonly blockNumber: bigint
  /** That block's time, in Unix seconds. */
  readonly time: number
  /** The native balance, in wei. */
  readonly eth: bigint
  /** The sweeper contract's fee, in basis points of the ETH a taker pays. */
  readonly feeBps: number
  /** One per token asked, in the same order. */
  readonly tokens: ReadonlyArray<TokenHolding>
}

/** A holder and a token: the key of a standing approval. */
export interface HolderToken {
  readonly holder: Address
  readonly token: Address
}

/** Balances and allowances of holder–token pairs, and the metadata of their tokens, read in one block. */
export interface PairBalances {
  /** One per pair asked, in the same order. */
  readonly pairs: ReadonlyArray<{ readonly balance: bigint; readonly allowance: bigint }>
  readonly tokens: ReadonlyMap<Address, TokenMetadata>
}

/** Reads balances, allowances to the sweeper and token metadata from a network, many at once. */
export class BalanceReader extends Context.Service<
  BalanceReader,
  {
    /**
     * Balances, allowances to the sweeper, decimals and symbols of `tokens` for `holder`, with its
     * native balance, the sweeper's fee and the block number: one RPC round trip, in block `blockNumber` when
     * given, else in the latest.
     */
    readonly holdings: (
      network: Network,
      holder: Address,
      tokens: ReadonlyArray<Address>,
      blockNumber?: bigint
    ) => Effect.Effect<Holdings, ChainUnavailable>
    /** Balances and allowances to the sweeper of `pairs` in block `blockNumber`, with their tokens' metadata. */
    readonly pairs: (
      network: Network,
      pairs: ReadonlyArray<HolderToken>,
      blockNumber: bigint
    ) => Effect.Effect<PairBalances, ChainUnavailable>
    /** The decimals and symbols of `tokens`, in the same order. */
    readonly metadata: (
      network: Network,
      tokens: ReadonlyArray<Address>
    ) => Effect.Effect<ReadonlyArray<TokenMetadata>, ChainUnavailable>
    /** The number of the latest block. */
    readonly head: (network: Network) => Effect.Effect<bigint, ChainUnavailable>
  }
>()("@walletgate/core/BalanceReader") {
  /**
   * Reads through Multicall3 (`aggregate3`), one `eth_call` per batch: at its canonical address where the chain has
   * it, deployless elsewhere (see `makeMulticallRoutes`; the first read of a chain asks which, once).
   */
  static readonly multicall: Layer.Layer<BalanceReader> = Layer.sync(BalanceReader, () => {
    const read = reader(makeMulticallRoutes())
    return BalanceReader.of({
      holdings: (network, holder, tokens, blockNumber) => {
        const calls: Array<ContractFunctionParameters> = [
          { address: BLOCK_PROBE, abi: blockProbeAbi, functionName: "block", args: [holder] },
          { address: network.contracts.sweeper, abi: sweeperArtifact.abi, functionName: "feeBps" },
          ...tokens.flatMap((token) => [
            ...balanceAndAllowance(token, holder, network.contracts.sweeper),
            ...metadataCalls(token)
          ])
        ]
        return read(network, "holdings", calls, {
          // The block's number and time and the holder's ETH come from code placed at BLOCK_PROBE for this call only
          // (an eth_call state override), so the values and the block they were read in arrive in one round trip.
          stateOverride: [{ address: BLOCK_PROBE, code: BLOCK_PROBE_CODE }],
          ...(blockNumber === undefined ? {} : { blockNumber })
        }).pipe(
          Effect.flatMap((results) =>
            Effect.gen(function* () {
              const [blockNumber, time, eth] = yield* required(
                network,
                results,
                0,
                isBigIntTriple,
                "block number, time and ETH balance"
              )
              const feeBps = yield* required(network, results, 1, Predicate.isBigInt, "sweeper fee")
              const holdings: Array<TokenHolding> = []
              for (const [index, token] of tokens.entries()) {
                const at = 2 + index * 4
                holdings.push({
                  token,
                  balance: yield* required(network, results, at, Predicate.isBigInt, `balanceOf of ${token}`),
                  allowance: yield* required(network, results, at + 1, Predicate.isBigInt, `allowance of ${token}`),
                  ...metadataAt(results, at + 2)
                })
              }
              return { blockNumber, time: Number(time), eth, feeBps: Number(feeBps), tokens: holdings }
            })
          )
        )
      },
      pairs: (network, pairs, blockNumber) => {
        const distinct = [...new Set(pairs.map((pair) => pair.token))]
        const calls = [
          ...pairs.flatMap((pair) => balanceAndAllowance(pair.token, pair.holder, network.contracts.sweeper)),
          ...distinct.flatMap(metadataCalls)
        ]
        if (calls.length === 0) return Effect.succeed({ pairs: [], tokens: new Map() })
        // Many pairs may not fit one eth_call's gas cap: parts of 256 KiB of encoded calls (about 540 pairs), at once.
        return read(network, "pairs", calls, { blockNumber, maxCallBytes: 262_144 }).pipe(
          Effect.flatMap((results) =>
            Effect.gen(function* () {
              const balances: Array<{ balance: bigint; allowance: bigint }> = []
              for (const [index, pair] of pairs.entries()) {
                balances.push({
                  balance: yield* required(
                    network,
                    results,
                    index * 2,
                    Predicate.isBigInt,
                    `balanceOf of ${pair.token}`
                  ),
                  allowance: yield* required(
                    network,
                    results,
                    index * 2 + 1,
                    Predicate.isBigInt,
                    `allowance of ${pair.token}`
                  )
                })
              }
              const first = pairs.length * 2
              const tokens = new Map(distinct.map((token, index) => [token, metadataAt(results, first + index * 2)]))
              return { pairs: balances, tokens }
            })
          )
        )
      },
      metadata: (network, tokens) =>
        tokens.length === 0
          ? Effect.succeed([])
          : read(network, "metadata", tokens.flatMap(metadataCalls), {}).pipe(
              Effect.map((results) => tokens.map((_, index) => metadataAt(results, index * 2)))
            ),
      head: (network) => rpc(network, "blockNumber", () => network.publicClient.getBlockNumber({ cacheTime: 0 }))
    })
  })
}

/** Where the block-number probe's code is placed for one call: an address with no code of its own. */
const BLOCK_PROBE: Address = "0x000000000000000000000000000000000000b10c"
/**
 * `PUSH1 4 CALLDATALOAD BALANCE PUSH1 64 MSTORE NUMBER PUSH1 0 MSTORE TIMESTAMP PUSH1 32 MSTORE PUSH1 96 PUSH1 0
 * RETURN`: answers the block's number and time and the ETH balance of the address in its first argument, whatever
 * the selector (Multicall3's own `getEthBalance` is out of reach when Multicall3 runs deployless).
 */
const BLOCK_PROBE_CODE: Hex = "0x60043531604052436000524260205260606000f3"
/** `block(address holder) view returns (uint256, uint256, uint256)` (written out: no parsing at import). */
const blockProbeAbi = [
  {
    type: "function",
    name: "block",
    stateMutability: "view",
    inputs: [{ type: "address", name: "holder" }],
    outputs: [{ type: "uint256" }, { type: "uint256" }, { type: "uint256" }]
  }
] as const

/** The probe's answer, as viem decodes three outputs: three integers. */
const isBigIntTriple = (value: unknown): value is readonly [bigint, bigint, bigint] =>
  Array.isArray(value) && value.length === 3 && value.every(Predicate.isBigInt)

type CallResult = { readonly status: "success"; readonly result: unknown } | { readonly status: "failure" }

const balanceAndAllowance = (token: Address, holder: Address, sweeper: Address): Array<ContractFunctionParameters> => [
  { address: token, abi: erc20Abi, functionName: "balanceOf", args: [holder] },
  { address: token, abi: erc20Abi, functionName: "allowance", args: [holder, sweeper] }
]

const metadataCalls = (token: Address): Array<ContractFunctionParameters> => [
  { address: token, abi: erc20Abi, functionName: "decimals" },
  { address: token, abi: erc20Abi, functionName: "symbol" }
]

/**
 * How much one deployless `eth_call` carries, in ABI-encoded bytes. Its calls travel inside init code, which EIP-3860
 * caps at 49 152 bytes beside Multicall3's own code (5.6 KB) and viem's deployless wrapper; its answers come back as
 * the code the constructor returns, which EIP-170 caps at 24 576 bytes (4 KiB kept for strings longer than a word).
 */
const DEPLOYLESS_LIMIT: PartLimit = { calls: 40_960, answers: 20_480 }

/** The most ABI-encoded `aggregate3` calls and answers one `eth_call` may carry. */
interface PartLimit {
  readonly calls: number
  readonly answers: number
}

/**
 * One call's share of `aggregate3`'s ABI-encoded calls: five words (its offset, target, allowFailure, the offset and
 * length of its calldata) and its calldata padded to whole words; a call viem cannot encode goes as empty calldata.
 */
const callBytes = (call: ContractFunctionParameters): number => {
  try {
    return 160 + Math.ceil((encodeFunctionData(call).length - 2) / 64) * 32
  } catch {
    return 160
  }
}

/**
 * One call's share of `aggregate3`'s ABI-encoded answers, as its function declares them: four words (offset, success,
 * the offset and length of its data), a word per output, and two more for a string or bytes that fits one word.
 */
const answerBytes = (call: ContractFunctionParameters): number => {
  const item = (call.abi as Abi).find(
    (entry): entry is AbiFunction => entry.type === "function" && entry.name === call.functionName
  )
  const outputs = item?.outputs ?? []
  const dynamic = outputs.filter((output) => output.type === "string" || output.type === "bytes").length
  return 128 + (outputs.length + 2 * dynamic) * 32
}

/** `calls` cut, in order, into parts within `limit` each (a call larger than the limit makes a part alone). */
const partsOf = (
  calls: ReadonlyArray<ContractFunctionParameters>,
  limit: PartLimit
): ReadonlyArray<ReadonlyArray<ContractFunctionParameters>> => {
  const parts: Array<Array<ContractFunctionParameters>> = []
  let current: Array<ContractFunctionParameters> = []
  let size = { calls: 0, answers: 0 }
  for (const call of calls) {
    const next = { calls: size.calls + callBytes(call), answers: size.answers + answerBytes(call) }
    if (current.length > 0 && (next.calls > limit.calls || next.answers > limit.answers)) {
      parts.push(current)
      current = []
      size = { calls: 0, answers: 0 }
    }
    current.push(call)
    size = { calls: size.calls + callBytes(call), answers: size.answers + answerBytes(call) }
  }
  if (current.length > 0) parts.push(current)
  return parts
}

/**
 * Runs `calls` through Multicall3 by the network's route; each call may fail on its own (`allowFailure`). A read
 * larger than `maxCallBytes` of encoded calls (deployless: also than {@link DEPLOYLESS_LIMIT}) goes as several
 * `eth_call`s at once, pinned to one block (read first unless the caller gave one): the values still come from a
 * single block.
 */
const reader =
  (routeOf: (network: Network) => Effect.Effect<MulticallRoute, ChainUnavailable>) =>
  (
    network: Network,
    what: string,
    calls: ReadonlyArray<ContractFunctionParameters>,
    options: {
      /** The most encoded calls in one `eth_call` (a bound on its gas); none: one `eth_call` where Multicall3 is deployed. */
      readonly maxCallBytes?: number
      readonly blockNumber?: bigint
      readonly stateOverride?: ReadonlyArray<{ readonly address: Address; readonly code: Hex }>
    }
  ): Effect.Effect<ReadonlyArray<CallResult>, ChainUnavailable> =>
    Effect.gen(function* () {
      const route = yield* routeOf(network)
      const limit: PartLimit | undefined =
        "deployless" in route
          ? { ...DEPLOYLESS_LIMIT, calls: Math.min(options.maxCallBytes ?? Infinity, DEPLOYLESS_LIMIT.calls) }
          : options.maxCallBytes === undefined
            ? undefined
            : { calls: options.maxCallBytes, answers: Infinity }
      const parts = limit === undefined ? [calls] : partsOf(calls, limit)
      const blockNumber =
        options.blockNumber ??
        (parts.length > 1
          ? yield* rpc(network, "blockNumber", () => network.publicClient.getBlockNumber({ cacheTime: 0 }))
          : undefined)
      const results = yield* Effect.forEach(
        parts,
        (part) =>
          rpc(network, what, () =>
            network.publicClient.multicall({
              contracts: part,
              allowFailure: true,
              ...route,
              // Each part is one eth_call: viem's own split counts calldata, not what the EIP caps count.
              batchSize: 0,
              ...(blockNumber === undefined ? {} : { blockNumber }),
              ...(options.stateOverride === undefined ? {} : { stateOverride: [...options.stateOverride] })
            })
          ),
        { concurrency: "unbounded" }
      )
      return results.flat()
    })

/** The result of call `index`, which must have succeeded with a value of the expected type. */
const required = <A>(
  network: Network,
  results: ReadonlyArray<CallResult>,
  index: number,
  is: (value: unknown) => value is A,
  what: string
): Effect.Effect<A, ChainUnavailable> => {
  const result = results[index]
  // A token that cannot tell a balance fails the whole read: a portfolio without it would be wrong.
  return result?.status === "success" && is(result.result)
    ? Effect.succeed(result.result)
    : Effect.fail(new ChainUnavailable({ network: network.slug, cause: `${what} could not be read` }))
}

/**
 * The longest `symbol()` taken from a token, in UTF-16 code units: a contract chooses its symbol, and it is stored in
 * the order index and answered in every listing. A longer one is not read (the token list's symbol, or `UNKNOWN`).
 */
const MAX_SYMBOL_LENGTH = 64

/** The metadata whose `decimals()` result is at `index` and `symbol()` result right after it. */
const metadataAt = (results: ReadonlyArray<CallResult>, index: number): TokenMetadata => {
  const decimals = results[index]
  const symbol = results[index + 1]
  return {
    decimals:
      decimals?.status === "success" && Predicate.isNumber(decimals.result) && decimals.result <= 77
        ? decimals.result
        : undefined,
    symbol:
      symbol?.status === "success" &&
      Predicate.isString(symbol.result) &&
      symbol.result.trim() !== "" &&
      symbol.result.length <= MAX_SYMBOL_LENGTH
        ? symbol.result
        : undefined
  }
}
