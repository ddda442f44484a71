import * as Cache from "effect/Cache"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { type Address, formatEther, formatUnits, getAddress, zeroAddress } from "viem"
import type { ChainUnavailable } from "../chain/errors"
import { type Network, Networks } from "../chain/networks"
import type { StoreUnavailable } from "../state/errors"
import { BalanceReader, type TokenHolding, type TokenMetadata } from "./BalanceReader"
import { type IndexSyncing, type PriceUnavailable, SweeperNotConfigured } from "./errors"
import { sharedHead } from "./head"
import { type IndexTarget, indexIdOf, makeOrderIndexer } from "./indexer"
import { byPosition, type IndexedApproval, type IndexedSweep, OrderIndex } from "./OrderIndex"
import { PriceOracle } from "./PriceOracle"
import type { OpenOrder, Order, PastOrder, PortfolioEntry, WalletInfo } from "./schemas"
import { SweeperSettings } from "./settings"
import { type SupportedToken, TokenRegistry } from "./TokenRegistry"

/** Why a lookup has no answer. */
export type LookupError = SweeperNotConfigured | ChainUnavailable | PriceUnavailable | IndexSyncing | StoreUnavailable

/** Most address answers kept at once, of any block (the least recently asked go first). */
const CACHED_ADDRESSES = 1_000

/** Most answers of each listing kept at once: the head's, and the one before while lookups of it finish. */
const CACHED_LISTINGS = 2

/**
 * The dust-sweeping lookups (SPEC §4.5–4.7), from the chain: an address's portfolio and sweeps, and the
 * orders. Balances are read in one round trip, and the order index is caught up to the same block
 * before it is read, so an answer is one consistent snapshot or a failure, never a partial one.
 * Answers are kept per head block (failures are not): each lookup reads the head (one `eth_blockNumber` shared by
 * the lookups asking at once) and is answered what was read in that block, read once; a new block is seen at once.
 * An answer is kept at most `cacheSeconds` (prices move between blocks; `0` keeps nothing and reads no head first);
 * the listings scan and list at most `maxOrders` orders, the newest.
 */
export class SweeperLookups extends Context.Service<
  SweeperLookups,
  {
    /** The portfolio of `address` on the sweeper's network and its past orders (sweeps), newest first. */
    readonly wallet: (address: Address) => Effect.Effect<WalletInfo, LookupError>
    /** Every order, open and swept, newest first. */
    readonly allOrders: Effect.Effect<ReadonlyArray<Order>, LookupError>
    /** The open orders: standing approvals with balance still to sweep, newest first. */
    readonly openOrders: Effect.Effect<ReadonlyArray<OpenOrder>, LookupError>
  }
>()("@walletgate/core/SweeperLookups") {
  /**
   * The lookups over `SweeperSettings`, `Networks`, `TokenRegistry`, `BalanceReader`, `PriceOracle` and
   * `OrderIndex`. Without settings they answer `sweeper_not_configured`; a network that is not served is
   * a configuration error at start.
   */
  static readonly layer = Layer.effect(
    SweeperLookups,
    Effect.gen(function* () {
      const settings = yield* SweeperSettings
      if (settings.network === undefined) {
        const notConfigured = Effect.fail(new SweeperNotConfigured())
        return SweeperLookups.of({ wallet: () => notConfigured, allOrders: notConfigured, openOrders: notConfigured })
      }
      const network = (yield* Networks).resolve(settings.network)
      if (network === undefined) {
        return yield* Effect.die(new RangeError(`sweeper.network: "${settings.network}" is not a served network`))
      }
      const registry = yield* TokenRegistry
      const reader = yield* BalanceReader
      const oracle = yield* PriceOracle
      const index = yield* OrderIndex
      const indexer = yield* makeOrderIndexer

      /** The supported tokens now, and the index that follows them. */
      const followed = Effect.map(registry.tokens(network.slug), (tokens) => {
        const target: IndexTarget = {
          network,
          id: indexIdOf(network, tokens, settings.fromBlock),
          tokens,
          fromBlock: settings.fromBlock,
          maxBlockRange: settings.maxBlockRange,
          maxLogRequests: settings.maxLogRequestsPerLookup
        }
        return { tokens, target }
      })

      /** The wallet of `address` in block `head`, or in the latest block when none is given. */
      const wallet = Effect.fn("SweeperLookups.wallet")(function* (address: Address, head: bigint | undefined) {
        const { tokens, target } = yield* followed
        const addresses = tokens.map((token) => token.address)
        const [holdings, prices] = yield* Effect.all(
          [reader.holdings(network, address, addresses, head), oracle.prices(network.slug, addresses)],
          { concurrency: "unbounded" }
        )
        yield* indexer.catchUp(target, holdings.blockNumber)
        const [lastTransfers, sweeps] = yield* Effect.all([
          index.lastTransfers(target.id, address),
          index.sweeps(target.id, address)
        ])
        const native = holdings.eth === 0n ? [] : [nativeEntry(network, holdings.eth, prices.eth, holdings.time)]
        const entries = holdings.tokens.flatMap((holding, at) => {
          const token = tokens[at]
          if (token === undefined || holding.balance === 0n) return []
          return [
            tokenEntry(token, holding, {
              price: prices.tokens.get(token.address.toLowerCase()),
              ethPrice: prices.eth,
              feeBps: holdings.feeBps,
              lastTransfer: lastTransfers.get(token.address.toLowerCase())
            })
          ]
        })
        return {
          address: getAddress(address),
          portfolio: [...native, ...entries],
          // Another lookup may have indexed further: keep to the block the balances were read in.
          past_orders: sweeps.filter((sweep) => sweep.blockNumber <= holdings.blockNumber).map(pastOrder)
        }
      })

      /**
       * The open orders in block `at` (none: the head, read now): standing approvals whose holder still has balance the
       * allowance covers.
       */
      const open = Effect.fnUntraced(function* (at: bigint | undefined) {
        const { tokens, target } = yield* followed
        const head = at ?? (yield* reader.head(network))
        yield* indexer.catchUp(target, head)
        // Anyone can approve the sweeper for a listed token: only the newest `maxOrders` approvals are read.
        const approvals = (yield* index.standingApprovals(target.id))
          .filter((approval) => approval.blockNumber <= head)
          .sort((a, b) => byPosition(b, a))
          .slice(0, settings.maxOrders)
        const read = yield* reader.pairs(network, approvals, head)
        const listed = new Map(tokens.map((token) => [token.address, token]))
        const orders = approvals.flatMap((approval, at) => {
          const pair = read.pairs[at]
          const token = listed.get(approval.token)
          if (pair === undefined || token === undefined) return []
          // biome-ignore lint/complexity/useMathMinMax: these are bigints, which Math.min does not take
          const remaining = pair.balance < pair.allowance ? pair.balance : pair.allowance
          if (remaining === 0n) return []
          const { symbol, decimals } = described(token, read.tokens.get(approval.token))
          return [{ approval, balance: formatUnits(remaining, decimals), symbol }]
        })
        return { head, target, orders }
      })

      const openOrders = (at: bigint | undefined) =>
        Effect.map(open(at), ({ orders }) =>
          orders.map(
            ({ approval, balance, symbol }): OpenOrder => ({
              balance,
              token: [symbol, approval.token],
              maker: approval.holder,
              time: iso(approval.time),
              tx: approval.tx
            })
          )
        ).pipe(Effect.withSpan("SweeperLookups.openOrders"))

      const allOrders = Effect.fn("SweeperLookups.allOrders")(function* (at: bigint | undefined) {
        const { head, target, orders } = yield* open(at)
        const sweeps = (yield* index.sweeps(target.id))
          .filter((sweep) => sweep.blockNumber <= head)
          .slice(0, settings.maxOrders)
        const listing: Array<{ readonly at: IndexedApproval | IndexedSweep; readonly order: Order }> = [
          ...orders.map(({ approval, balance, symbol }) => ({
            at: approval,
            order: { balance, symbol, maker: approval.holder, time: iso(approval.time), tx: approval.tx }
          })),
          ...sweeps.map((sweep) => ({
            at: sweep,
            order: {
              balance: formatUnits(sweep.amount, sweep.decimals),
              symbol: sweep.symbol,
              maker: sweep.holder,
              time: iso(sweep.time),
              tx: sweep.tx
            }
          }))
        ]
        listing.sort((a, b) => byPosition(b.at, a.at))
        return listing.slice(0, settings.maxOrders).map(({ order }) => order)
      })

      // One read of the chain per block (and per `cacheSeconds`) for each address and each listing; concurrent lookups
      // of one share the read under way, and a kept answer is the same object, so its entity tag is computed once.
      const head = settings.cacheSeconds === 0 ? undefined : yield* sharedHead(reader.head(network))
      const keptWallet = yield* keptPerBlock(settings.cacheSeconds, head, CACHED_ADDRESSES, wallet)
      const keptOpen = yield* keptPerBlock(settings.cacheSeconds, head, CACHED_LISTINGS, (_: "open", at) =>
        openOrders(at)
      )
      const keptAll = yield* keptPerBlock(settings.cacheSeconds, head, CACHED_LISTINGS, (_: "all", at) => allOrders(at))
      return SweeperLookups.of({
        // One key per address, however it is spelled: the answer names it checksummed either way.
        wallet: (address) => keptWallet(address.toLowerCase() as Address),
        allOrders: keptAll("all"),
        openOrders: keptOpen("open")
      })
    })
  )
}

/**
 * `lookup` of a key in the block `head` reads, its successes kept per key and block for at most `seconds` (at most
 * `capacity` of them, the least recently asked forgotten first), concurrent calls for one key in one block sharing
 * one run; without a `head` (`cacheSeconds` 0), `lookup` in the latest block, nothing kept and no head read first.
 * Failures are not kept: the next call tries again (an index that is syncing goes on from where it stopped).
 */
const keptPerBlock = <K, A, E, H>(
  seconds: number,
  head: Effect.Effect<bigint, H> | undefined,
  capacity: number,
  lookup: (key: K, block: bigint | undefined) => Effect.Effect<A, E>
): Effect.Effect<(key: K) => Effect.Effect<A, E | H>> =>
  head === undefined
    ? Effect.succeed((key: K) => lookup(key, undefined))
    : Effect.map(
        // Keys are compared structurally: [key, block] names one answer.
        Cache.makeWith(([key, block]: readonly [K, bigint]) => lookup(key, block), {
          capacity,
          timeToLive: (exit) => (Exit.isSuccess(exit) ? Duration.seconds(seconds) : Duration.zero)
        }),
        (cache) => (key: K) => Effect.flatMap(head, (block) => Cache.get(cache, [key, block] as const))
      )

/** USD values are rounded to micro-dollars (USDC's precision): dust is worth fractions of a cent. */
const USD_DECIMALS = 6

/** ETH values are rounded to wei. */
const ETH_DECIMALS = 18

/**
 * `value` as a JSON number rounded to `decimals` places and to 15 significant digits (what a double holds
 * exactly as decimal), so an answer never prints binary float noise such as `0.49724999999999997`.
 */
const roundedNumber = (value: number, decimals: number): number =>
  Number(Number(value.toFixed(Math.min(Math.max(decimals, 0), 100))).toPrecision(15))

/** An ISO 8601 UTC timestamp of a Unix time in seconds. */
const iso = (seconds: number): string => DateTime.formatIso(DateTime.makeUnsafe(seconds * 1000))

/** The contract's symbol and decimals where they could be read, else the list's. */
const described = (token: SupportedToken, metadata: TokenMetadata | undefined) => ({
  symbol: metadata?.symbol ?? token.symbol,
  decimals: metadata?.decimals ?? token.decimals
})

/** A supported token's entry: `unsupported` without a price, `approved` when the allowance covers the balance. */
const tokenEntry = (
  token: SupportedToken,
  holding: TokenHolding,
  quote: {
    readonly price: number | undefined
    readonly ethPrice: number
    readonly feeBps: number
    readonly lastTransfer: number | undefined
  }
): PortfolioEntry => {
  const { symbol, decimals } = described(token, holding)
  const amount = Number(formatUnits(holding.balance, decimals))
  const status =
    quote.price === undefined ? "unsupported" : holding.allowance >= holding.balance ? "approved" : "sweepable"
  const usd = quote.price === undefined ? null : amount * quote.price
  const eth = usd === null ? null : usd / quote.ethPrice
  const kept = (10_000 - quote.feeBps) / 10_000
  return {
    token: { symbol, contract_address: token.address, status },
    balance: {
      amount: roundedNumber(amount, decimals),
      asset_type: symbol,
      usd_value: usd === null ? null : roundedNumber(usd, USD_DECIMALS),
      eth_value: eth === null ? null : roundedNumber(eth, ETH_DECIMALS)
    },
    quote_rate: quote.price ?? null,
    last_transferred_at: quote.lastTransfer === undefined ? null : iso(quote.lastTransfer),
    sweeping_value:
      status === "unsupported" || usd === null || eth === null
        ? { usd: 0, eth: 0 }
        : { usd: roundedNumber(usd * kept, USD_DECIMALS), eth: roundedNumber(eth * kept, ETH_DECIMALS) }
  }
}

/**
 * The native coin's entry: `unsupported`, as it is not on the token list (sweeps pay in it); its address
 * is the zero address, as the payout endpoints name the native coin. No Transfer event tells its last move,
 * so `last_transferred_at` (a string in SPEC §2.2) is the time of the block its balance was read in.
 */
const nativeEntry = (network: Network, wei: bigint, ethPrice: number, readAt: number): PortfolioEntry => {
  const symbol = network.publicClient.chain.nativeCurrency.symbol
  const amount = Number(formatEther(wei))
  return {
    token: { symbol, contract_address: zeroAddress, status: "unsupported" },
    balance: {
      amount: roundedNumber(amount, ETH_DECIMALS),
      asset_type: symbol,
      usd_value: roundedNumber(amount * ethPrice, USD_DECIMALS),
      eth_value: roundedNumber(amount, ETH_DECIMALS)
    },
    quote_rate: ethPrice,
    last_transferred_at: iso(readAt),
    sweeping_value: { usd: 0, eth: 0 }
  }
}

/** A sweep as a past order: the holder received the ETH paid less the fee. */
const pastOrder = (sweep: IndexedSweep): PastOrder => {
  const received = sweep.ethPaid - sweep.fee
  return {
    blockNum: Number(sweep.blockNumber),
    time: iso(sweep.time),
    erc20: { symbol: sweep.symbol, address: sweep.token, amount: formatUnits(sweep.amount, sweep.decimals) },
    hash: sweep.tx,
    value: {
      eth: formatEther(received),
      usd: roundedNumber(Number(formatEther(received)) * sweep.ethPrice, USD_DECIMALS)
    },
    ethPrice: sweep.ethPrice
  }
}
