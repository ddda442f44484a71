import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import { type Address, type ContractFunctionParameters, encodeFunctionData, erc20Abi, type Hex, parseAbi } from "viem"
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
     * native balance, the sweeper's fee and the block number: one RPC round trip.
     */
    readonly holdings: (
      network: Network,
      holder: Address,
      tokens: ReadonlyArray<Address>
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
      holdings: (network, holder, tokens) => {
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
          // viem splits a multicall at 1 024 bytes of calldata by default; 0 keeps it one eth_call.
          batchSize: 0
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
        // Many pairs may not fit one eth_call's gas cap: batches of 64 KiB of calldata, in parallel.
        return read(network, "pairs", calls, { blockNumber, batchSize: 65_536 }).pipe(
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
          : read(network, "metadata", tokens.flatMap(metadataCalls), { batchSize: 0 }).pipe(
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
const blockProbeAbi = parseAbi(["function block(address holder) view returns (uint256, uint256, uint256)"])

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
 * The most calldata per deployless `eth_call`, as viem counts it (the calls' own data): the calls travel inside init
 * code, which EIP-3860 caps at 49 152 bytes, and each call's ABI framing adds about 160 bytes to a 36-byte call.
 */
const DEPLOYLESS_CHUNK_BYTES = 6_000

/** The calldata `calls` make, in bytes, as viem counts it when it splits a multicall. */
const calldataBytes = (calls: ReadonlyArray<ContractFunctionParameters>): number =>
  calls.reduce((sum, call) => sum + (encodeFunctionData(call).length - 2) / 2, 0)

/**
 * Runs `calls` through Multicall3 by the network's route; each call may fail on its own (`allowFailure`). Deployless,
 * a read too large for one `eth_call` is split, and its parts are pinned to one block (read first) unless the caller
 * gave one: the values still come from a single block.
 */
const reader =
  (routeOf: (network: Network) => Effect.Effect<MulticallRoute, ChainUnavailable>) =>
  (
    network: Network,
    what: string,
    calls: ReadonlyArray<ContractFunctionParameters>,
    options: {
      readonly batchSize: number
      readonly blockNumber?: bigint
      readonly stateOverride?: ReadonlyArray<{ readonly address: Address; readonly code: Hex }>
    }
  ): Effect.Effect<ReadonlyArray<CallResult>, ChainUnavailable> =>
    Effect.gen(function* () {
      const route = yield* routeOf(network)
      const deployless = "deployless" in route
      const batchSize = !deployless
        ? options.batchSize
        : options.batchSize === 0
          ? DEPLOYLESS_CHUNK_BYTES
          : Math.min(options.batchSize, DEPLOYLESS_CHUNK_BYTES)
      const blockNumber =
        options.blockNumber ??
        (deployless && calldataBytes(calls) > batchSize
          ? yield* rpc(network, "blockNumber", () => network.publicClient.getBlockNumber({ cacheTime: 0 }))
          : undefined)
      return yield* rpc(network, what, () =>
        network.publicClient.multicall({
          contracts: calls,
          allowFailure: true,
          ...route,
          batchSize,
          ...(blockNumber === undefined ? {} : { blockNumber }),
          ...(options.stateOverride === undefined ? {} : { stateOverride: [...options.stateOverride] })
        })
      )
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
      symbol?.status === "success" && Predicate.isString(symbol.result) && symbol.result.trim() !== ""
        ? symbol.result
        : undefined
  }
}
