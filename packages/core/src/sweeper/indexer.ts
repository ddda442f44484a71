import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Semaphore from "effect/Semaphore"
import { type Address, erc20Abi, getAbiItem, getAddress } from "viem"
import { sweeperArtifact } from "../chain/artifacts"
import type { ChainUnavailable } from "../chain/errors"
import { type Network, rpc } from "../chain/networks"
import type { StoreUnavailable } from "../state/errors"
import { BalanceReader } from "./BalanceReader"
import { IndexSyncing, type PriceUnavailable } from "./errors"
import {
  type IndexBatch,
  type IndexedApproval,
  type IndexedSweep,
  type IndexedTransfer,
  OrderIndex
} from "./OrderIndex"
import { PriceOracle } from "./PriceOracle"
import type { SupportedToken } from "./TokenRegistry"

/** What one order index follows: a network's sweeper and supported tokens, from a first block. */
export interface IndexTarget {
  readonly network: Network
  /** The index's id in the `OrderIndex` (see {@link indexIdOf}). */
  readonly id: string
  readonly tokens: ReadonlyArray<SupportedToken>
  readonly fromBlock: bigint
  /** Most blocks per `eth_getLogs`. */
  readonly maxBlockRange: number
  /** Most `eth_getLogs` per catch-up. */
  readonly maxLogRequests: number
}

/** The id of the index of `network`'s sweeper and `tokens` from `fromBlock`: another list is another index. */
export const indexIdOf = (network: Network, tokens: ReadonlyArray<SupportedToken>, fromBlock: bigint): string => {
  const followed = [network.contracts.sweeper, ...tokens.map((token) => token.address)].join(",").toLowerCase()
  const digest = createHash("sha256").update(`${network.chainId}:${followed}:${fromBlock}`).digest("hex")
  return `${network.slug}:${digest.slice(0, 16)}`
}

/** The failures of a catch-up. */
type CatchUpError = ChainUnavailable | PriceUnavailable | IndexSyncing | StoreUnavailable

/** The order indexer: reads logs into the `OrderIndex` up to a block. */
export interface OrderIndexer {
  /**
   * Reads the sweeper's `Swept` logs and the supported tokens' `Approval` (to the sweeper) and `Transfer`
   * logs after the index's cursor up to `toBlock`, in `eth_getLogs` of at most `maxBlockRange` blocks, at
   * most `maxLogRequests` of them; fails with {@link IndexSyncing} if more remain (what was read is
   * kept). One catch-up runs at a time; one that finds the index already there reads nothing.
   */
  readonly catchUp: (target: IndexTarget, toBlock: bigint) => Effect.Effect<void, CatchUpError>
}

const indexedEvents = [
  getAbiItem({ abi: erc20Abi, name: "Transfer" }),
  getAbiItem({ abi: erc20Abi, name: "Approval" }),
  getAbiItem({ abi: sweeperArtifact.abi, name: "Swept" })
] as const

/** Builds an {@link OrderIndexer} over the context's `OrderIndex`, `BalanceReader` and `PriceOracle`. */
export const makeOrderIndexer: Effect.Effect<OrderIndexer, never, OrderIndex | BalanceReader | PriceOracle> =
  Effect.gen(function* () {
    const index = yield* OrderIndex
    const reader = yield* BalanceReader
    const oracle = yield* PriceOracle
    const oneAtATime = Semaphore.makeUnsafe(1)

    const readRange = Effect.fnUntraced(function* (target: IndexTarget, fromBlock: bigint, toBlock: bigint) {
      const { network } = target
      const sweeper = network.contracts.sweeper
      const listed = new Map(target.tokens.map((token) => [token.address, token]))
      const logs = yield* rpc(network, "getLogs", () =>
        network.publicClient.getLogs({
          address: [sweeper, ...listed.keys()],
          events: indexedEvents,
          fromBlock,
          toBlock,
          // Logs whose indexed arguments do not fit the event (a non-standard token) are left out.
          strict: true
        })
      )
      const times = yield* blockTimes(
        network,
        logs.map((log) => ({ blockNumber: log.blockNumber, blockTimestamp: log.blockTimestamp }))
      )
      const approvals: Array<IndexedApproval> = []
      const transfers: Array<IndexedTransfer> = []
      const swept: Array<Omit<IndexedSweep, "symbol" | "decimals" | "ethPrice">> = []
      for (const log of logs) {
        const token = getAddress(log.address)
        const position = {
          blockNumber: log.blockNumber,
          time: times.get(log.blockNumber) ?? 0,
          tx: log.transactionHash,
          logIndex: log.logIndex
        }
        if (log.eventName === "Swept") {
          if (token !== sweeper) continue
          const { holder, taker, amount, ethPaid, fee } = log.args
          swept.push({
            ...position,
            holder: getAddress(holder),
            token: getAddress(log.args.token),
            taker: getAddress(taker),
            amount,
            ethPaid,
            fee
          })
        } else if (!listed.has(token)) {
        } else if (log.eventName === "Approval") {
          if (getAddress(log.args.spender) !== sweeper) continue
          approvals.push({ ...position, holder: getAddress(log.args.owner), token, value: log.args.value })
        } else {
          transfers.push({ token, from: getAddress(log.args.from), to: getAddress(log.args.to), time: position.time })
        }
      }
      const sweeps = yield* describeSweeps(target, listed, swept)
      return { approvals, sweeps, transfers }
    })

    /** Adds each sweep's token metadata (the list's, else the contract's) and the ETH price now. */
    const describeSweeps = Effect.fnUntraced(function* (
      target: IndexTarget,
      listed: ReadonlyMap<Address, SupportedToken>,
      swept: ReadonlyArray<Omit<IndexedSweep, "symbol" | "decimals" | "ethPrice">>
    ) {
      if (swept.length === 0) return []
      const unlisted = [...new Set(swept.map((sweep) => sweep.token))].filter((token) => !listed.has(token))
      const metadata = yield* reader.metadata(target.network, unlisted)
      const known = new Map<Address, { readonly symbol: string; readonly decimals: number }>(listed)
      for (const [at, token] of unlisted.entries()) {
        // A token that cannot tell its decimals is shown in base units.
        known.set(token, { symbol: metadata[at]?.symbol ?? "UNKNOWN", decimals: metadata[at]?.decimals ?? 0 })
      }
      const { eth } = yield* oracle.prices(target.network.slug, [])
      return swept.map(
        (sweep): IndexedSweep => ({
          ...sweep,
          symbol: known.get(sweep.token)?.symbol ?? "UNKNOWN",
          decimals: known.get(sweep.token)?.decimals ?? 0,
          ethPrice: eth
        })
      )
    })

    const catchUp = (target: IndexTarget, toBlock: bigint): Effect.Effect<void, CatchUpError> =>
      Effect.gen(function* () {
        let cursor = yield* index.cursor(target.id)
        let requests = 0
        while (true) {
          const fromBlock = cursor === undefined ? target.fromBlock : cursor + 1n
          if (fromBlock > toBlock) return
          if (requests === target.maxLogRequests) {
            return yield* new IndexSyncing({
              indexed: cursor === undefined ? "none" : String(cursor),
              head: String(toBlock)
            })
          }
          const lastBlock = fromBlock + BigInt(target.maxBlockRange) - 1n
          const batchEnd = lastBlock < toBlock ? lastBlock : toBlock
          requests += 1
          const events = yield* readRange(target, fromBlock, batchEnd)
          const batch: IndexBatch = { after: cursor, toBlock: batchEnd, ...events }
          // Another writer (another instance on a shared index) may have got there first: go on from its cursor.
          yield* index.record(target.id, batch)
          cursor = yield* index.cursor(target.id)
        }
      }).pipe(oneAtATime.withPermit)

    return { catchUp }
  })

/**
 * The time (Unix seconds) of each block that has logs: from the logs' `blockTimestamp` where the node
 * gives it (anvil, geth ≥ 1.16, reth), else from the blocks themselves.
 */
const blockTimes = (
  network: Network,
  logs: ReadonlyArray<{ readonly blockNumber: bigint; readonly blockTimestamp?: bigint | null | undefined }>
): Effect.Effect<ReadonlyMap<bigint, number>, ChainUnavailable> => {
  const times = new Map<bigint, number>()
  const missing = new Set<bigint>()
  for (const log of logs) {
    if (log.blockTimestamp === undefined || log.blockTimestamp === null) missing.add(log.blockNumber)
    else times.set(log.blockNumber, Number(log.blockTimestamp))
  }
  for (const known of times.keys()) missing.delete(known)
  return Effect.forEach(
    [...missing],
    (blockNumber) =>
      rpc(network, "getBlock", () => network.publicClient.getBlock({ blockNumber })).pipe(
        Effect.map((block) => [blockNumber, Number(block.timestamp)] as const)
      ),
    { concurrency: 8 }
  ).pipe(Effect.map((fetched) => new Map([...times, ...fetched])))
}
