import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { type Address, isAddress } from "viem"
import { PriceUnavailable } from "./errors"

/** USD prices: of ETH, and of the tokens that have one (keyed by lower-case address). */
export interface Prices {
  readonly eth: number
  readonly tokens: ReadonlyMap<string, number>
}

/** A fixed price table in USD: `{ eth: 3000, tokens: { "0xA0b8…": 1 } }`. */
export interface PriceTable {
  readonly eth?: number
  readonly tokens?: Readonly<Record<string, number>>
}

/** Settings of {@link PriceOracle.http}. */
export interface HttpPriceOptions {
  /** The price API's endpoint; see {@link PriceApiResponse} for what it must answer. */
  readonly url: string
  /** How long an answer (a price, or the absence of one) is reused; default 60 000 ms. */
  readonly ttlMs?: number
  /** How long to wait for the API; default 5 000 ms. */
  readonly timeoutMs?: number
  /** Most tokens named in one request; default 100. */
  readonly maxTokensPerRequest?: number
}

const Price = Schema.Finite.check(Schema.isGreaterThan(0))

/**
 * The JSON contract of the price API that {@link PriceOracle.http} calls:
 * `GET <url>?network=<slug>&tokens=<address>,<address>…` (lower-case addresses) answers 200 with
 * `{"eth": 3012.5, "tokens": {"0xa0b8…": 0.9998, "0xdead…": null}}`: USD prices, positive numbers; a
 * token that is absent or `null` has no price. Any other answer counts as the API being unavailable.
 */
const PriceApiResponse = Schema.Struct({
  eth: Price,
  tokens: Schema.Record(Schema.String, Schema.NullOr(Price))
})

/** Where USD prices of ETH and tokens come from. A token without a price is shown `unsupported`. */
export class PriceOracle extends Context.Service<
  PriceOracle,
  {
    /** The USD price of ETH and of those of `tokens` that have one, on `network` (a slug). */
    readonly prices: (network: string, tokens: ReadonlyArray<Address>) => Effect.Effect<Prices, PriceUnavailable>
  }
>()("@walletgate/core/PriceOracle") {
  /** A fixed table, for the playground and tests; without an ETH price every request is `price_unavailable`. */
  static readonly static = (table: PriceTable = {}): Layer.Layer<PriceOracle> => {
    if (table.eth !== undefined && !validPrice(table.eth)) throw new RangeError("sweeper prices: eth must be > 0")
    const tokens = new Map<string, number>()
    for (const [address, price] of Object.entries(table.tokens ?? {})) {
      if (!isAddress(address, { strict: false })) throw new RangeError(`sweeper prices: ${address} is not an address`)
      if (!validPrice(price)) throw new RangeError(`sweeper prices: the price of ${address} must be > 0`)
      tokens.set(address.toLowerCase(), price)
    }
    const eth = table.eth
    return Layer.succeed(
      PriceOracle,
      PriceOracle.of({
        prices: (_, wanted) =>
          eth === undefined
            ? Effect.fail(new PriceUnavailable({ cause: "the static price table has no ETH price" }))
            : Effect.succeed({ eth, tokens: pick(tokens, wanted) })
      })
    )
  }

  /**
   * A price API over `fetch` (contract: {@link PriceApiResponse}). Answers, prices and absences alike,
   * are cached for `ttlMs` per network and token, so a lookup asks only for what it has not seen lately;
   * a request that times out, fails or answers anything else fails with {@link PriceUnavailable}.
   */
  static readonly http = (options: HttpPriceOptions): Layer.Layer<PriceOracle> => {
    const ttlMs = options.ttlMs ?? 60_000
    const timeout = Duration.millis(options.timeoutMs ?? 5_000)
    const perRequest = options.maxTokensPerRequest ?? 100
    if (!Number.isInteger(perRequest) || perRequest < 1) throw new RangeError("maxTokensPerRequest must be ≥ 1")
    const decode = Schema.decodeUnknownEffect(PriceApiResponse)
    return Layer.sync(PriceOracle, () => {
      /** `<network>:eth` or `<network>:<address>` → the price (`null`: none) and when it goes stale. */
      const cache = new Map<string, { readonly price: number | null; readonly expiresAt: number }>()

      const ask = (network: string, tokens: ReadonlyArray<string>) => {
        const url = new URL(options.url)
        url.searchParams.set("network", network)
        url.searchParams.set("tokens", tokens.join(","))
        return Effect.tryPromise({
          try: async (signal) => {
            const response = await fetch(url, { headers: { accept: "application/json" }, signal })
            if (!response.ok) {
              await response.arrayBuffer()
              throw new Error(`HTTP ${response.status}`)
            }
            return (await response.json()) as unknown
          },
          catch: (error) =>
            new PriceUnavailable({ cause: `price API: ${error instanceof Error ? error.message : "error"}` })
        }).pipe(
          Effect.timeoutOrElse({
            duration: timeout,
            orElse: () => Effect.fail(new PriceUnavailable({ cause: "price API did not answer in time" }))
          }),
          Effect.flatMap((body) =>
            decode(body).pipe(
              Effect.mapError(() => new PriceUnavailable({ cause: "price API answered another shape" }))
            )
          )
        )
      }

      return PriceOracle.of({
        prices: (network, wanted) =>
          Effect.gen(function* () {
            const now = yield* Clock.currentTimeMillis
            const fresh = (key: string) => {
              const entry = cache.get(key)
              return entry !== undefined && entry.expiresAt > now ? entry : undefined
            }
            const missing = [...new Set(wanted.map((token) => token.toLowerCase()))].filter(
              (token) => fresh(`${network}:${token}`) === undefined
            )
            const chunks: Array<ReadonlyArray<string>> = []
            for (let at = 0; at < missing.length; at += perRequest) chunks.push(missing.slice(at, at + perRequest))
            if (chunks.length === 0 && fresh(`${network}:eth`) === undefined) chunks.push([])
            const answers = yield* Effect.forEach(chunks, (chunk) => ask(network, chunk), { concurrency: 4 })
            const expiresAt = now + ttlMs
            for (const [index, answer] of answers.entries()) {
              cache.set(`${network}:eth`, { price: answer.eth, expiresAt })
              const prices = new Map(Object.entries(answer.tokens).map(([key, price]) => [key.toLowerCase(), price]))
              for (const token of chunks[index] ?? []) {
                cache.set(`${network}:${token}`, { price: prices.get(token) ?? null, expiresAt })
              }
            }
            // Just fetched or still fresh: no entry can have gone missing in between.
            const eth = cache.get(`${network}:eth`)?.price
            if (eth === undefined || eth === null) {
              return yield* new PriceUnavailable({ cause: "price API gave no ETH price" })
            }
            const tokens = new Map<string, number>()
            for (const token of wanted) {
              const price = cache.get(`${network}:${token.toLowerCase()}`)?.price
              if (price !== undefined && price !== null) tokens.set(token.toLowerCase(), price)
            }
            return { eth, tokens }
          })
      })
    })
  }
}

const validPrice = (price: number): boolean => Number.isFinite(price) && price > 0

const pick = (table: ReadonlyMap<string, number>, wanted: ReadonlyArray<Address>): ReadonlyMap<string, number> => {
  const prices = new Map<string, number>()
  for (const token of wanted) {
    const price = table.get(token.toLowerCase())
    if (price !== undefined) prices.set(token.toLowerCase(), price)
  }
  return prices
}
