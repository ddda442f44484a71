import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import { type Address, type ContractFunctionParameters, erc20Abi, type Hex, parseAbi } from "viem"
import { multicallArtifact, sweeperArtifact } from "../chain/artifacts"
import { ChainUnavailable } from "../chain/errors"
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
  /** Reads through the network's Multicall contract (`aggregate3`), one `eth_call` per batch. */
  static readonly multicall: Layer.Layer<BalanceReader> = Layer.succeed(
    BalanceReader,
    BalanceReader.of({
      holdings: (network, holder, tokens) => {
        const calls: Array<ContractFunctionParameters> = [
          { address: BLOCK_PROBE, abi: blockProbeAbi, functionName: "block" },
          {
            address: network.contracts.multicall,
            abi: multicallArtifact.abi,
            functionName: "getEthBalance",
            args: [holder]
          },
          { address: network.contracts.sweeper, abi: sweeperArtifact.abi, functionName: "feeBps" },
          ...tokens.flatMap((token) => [
            ...balanceAndAllowance(token, holder, network.contracts.sweeper),
            ...metadataCalls(token)
          ])
        ]
        return read(network, "holdings", calls, {
          // The block's number and time come from code placed at BLOCK_PROBE for this call only (an eth_call
          // state override), so the values and the block they were read in arrive in one round trip.
          stateOverride: [{ address: BLOCK_PROBE, code: BLOCK_PROBE_CODE }],
          // viem splits a multicall at 1 024 bytes of calldata by default; 0 keeps it one eth_call.
          batchSize: 0
        }).pipe(
          Effect.flatMap((results) =>
            Effect.gen(function* () {
              const [blockNumber, time] = yield* required(network, results, 0, isBigIntPair, "block number and time")
              const eth = yield* required(network, results, 1, Predicate.isBigInt, "ETH balance")
              const feeBps = yield* required(network, results, 2, Predicate.isBigInt, "sweeper fee")
              const holdings: Array<TokenHolding> = []
              for (const [index, token] of tokens.entries()) {
                const at = 3 + index * 4
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
  )
}

/** Where the block-number probe's code is placed for one call: an address with no code of its own. */
const BLOCK_PROBE: Address = "0x000000000000000000000000000000000000b10c"
/**
 * `NUMBER PUSH1 0 MSTORE TIMESTAMP PUSH1 32 MSTORE PUSH1 64 PUSH1 0 RETURN`: answers the block's number and time,
 * whatever the calldata.
 */
const BLOCK_PROBE_CODE: Hex = "0x436000524260205260406000f3"
const blockProbeAbi = parseAbi(["function block() view returns (uint256, uint256)"])

/** The probe's answer, as viem decodes two outputs: a pair of integers. */
const isBigIntPair = (value: unknown): value is readonly [bigint, bigint] =>
  Array.isArray(value) && value.length === 2 && value.every(Predicate.isBigInt)

type CallResult = { readonly status: "success"; readonly result: unknown } | { readonly status: "failure" }

const balanceAndAllowance = (token: Address, holder: Address, sweeper: Address): Array<ContractFunctionParameters> => [
  { address: token, abi: erc20Abi, functionName: "balanceOf", args: [holder] },
  { address: token, abi: erc20Abi, functionName: "allowance", args: [holder, sweeper] }
]

const metadataCalls = (token: Address): Array<ContractFunctionParameters> => [
  { address: token, abi: erc20Abi, functionName: "decimals" },
  { address: token, abi: erc20Abi, functionName: "symbol" }
]

/** Runs `calls` through the network's Multicall; each call may fail on its own (`allowFailure`). */
const read = (
  network: Network,
  what: string,
  calls: ReadonlyArray<ContractFunctionParameters>,
  options: {
    readonly batchSize: number
    readonly blockNumber?: bigint
    readonly stateOverride?: ReadonlyArray<{ readonly address: Address; readonly code: Hex }>
  }
): Effect.Effect<ReadonlyArray<CallResult>, ChainUnavailable> =>
  rpc(network, what, () =>
    network.publicClient.multicall({
      contracts: calls,
      allowFailure: true,
      multicallAddress: network.contracts.multicall,
      batchSize: options.batchSize,
      ...(options.blockNumber === undefined ? {} : { blockNumber: options.blockNumber }),
      ...(options.stateOverride === undefined ? {} : { stateOverride: [...options.stateOverride] })
    })
  )

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
