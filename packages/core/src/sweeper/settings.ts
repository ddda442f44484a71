import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import type { CorsOrigins } from "../http/cors"
import type { PriceTable } from "./PriceOracle"
import type { SupportedToken } from "./TokenRegistry"

/** The dust-sweeping lookups' configuration, as `embeddedPorts({ sweeper })` takes it. */
export interface SweeperOptions {
  /** The network every lookup reads (a slug of the served networks): one address, one network. */
  readonly network: string
  /** The tokens the sweeper takes there (the `TokenRegistry`). */
  readonly tokens: ReadonlyArray<SupportedToken>
  /** The embedded USD price table (`PriceOracle.static`); provide `PriceOracle.http(…)` for live prices. */
  readonly prices?: PriceTable
  /** `Cache-Control: public, max-age=…` of the lookups' answers; default 15 s, at most 300. */
  readonly maxAgeSeconds?: number
  /** Origins whose scripts may read the lookups: `"*"` (default) or exact origins (`https://app.example`). */
  readonly corsOrigins?: CorsOrigins
  /** The first block the order index reads: the sweeper's deployment block; default 0. */
  readonly fromBlock?: bigint
  /** Most blocks one `eth_getLogs` asks for (providers cap it); default 10 000. */
  readonly maxBlockRange?: number
  /**
   * Most `eth_getLogs` one lookup makes to catch the index up; further behind, it answers 503
   * `index_syncing` and the next lookup goes on from there; default 20.
   */
  readonly maxLogRequestsPerLookup?: number
  /**
   * The longest an answer is kept, per address and for the order listings, while the chain's head stays the same
   * block: each lookup reads the head first (one `eth_blockNumber` shared by the lookups arriving together), is
   * answered what was read in that block, and sees a new block at once; within one block the answer is read again
   * after this long (prices move between blocks). Default 5 s, at most 60; 0 keeps nothing, reads no head first and
   * reads the chain for every lookup. Concurrent lookups of one key in one block share one read.
   */
  readonly cacheSeconds?: number
  /**
   * Lookups one client IP may make per minute; default 60. Requests whose client IP is unknown share one such budget
   * (so a gateway that cannot tell clients apart limits them all together rather than none).
   */
  readonly lookupsPerIpPerMinute?: number
  /**
   * Most standing approvals a listing reads from the chain, newest first, and most orders it lists; default 1 000,
   * at most 10 000. Anyone can add approvals, so this bounds the work one listing costs.
   */
  readonly maxOrders?: number
}

/** {@link SweeperOptions} in force, with defaults; `network` is `undefined` when lookups are not configured. */
export interface SweeperValues {
  readonly network: string | undefined
  readonly maxAgeSeconds: number
  readonly corsOrigins: CorsOrigins
  readonly fromBlock: bigint
  readonly maxBlockRange: number
  readonly maxLogRequestsPerLookup: number
  readonly cacheSeconds: number
  readonly lookupsPerIpPerMinute: number
  readonly maxOrders: number
}

/** The settings of the dust-sweeping lookups. */
export class SweeperSettings extends Context.Service<SweeperSettings, SweeperValues>()(
  "@walletgate/core/SweeperSettings"
) {
  /** The settings of `options` (none: the lookups answer 404); throws a `RangeError` at start for a bad value. */
  static readonly layer = (options?: SweeperOptions): Layer.Layer<SweeperSettings> =>
    Layer.succeed(SweeperSettings, SweeperSettings.of(resolveSweeperSettings(options)))
}

const whole = (name: string, value: number, min: number, max: number): number => {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`sweeper.${name} must be a whole number from ${min} to ${max}, got ${value}`)
  }
  return value
}

/** Applies the defaults of {@link SweeperOptions} and checks its bounds. */
export const resolveSweeperSettings = (options: SweeperOptions | undefined): SweeperValues => {
  const fromBlock = options?.fromBlock ?? 0n
  if (fromBlock < 0n) throw new RangeError("sweeper.fromBlock must not be negative")
  const origins = options?.corsOrigins ?? "*"
  if (origins !== "*") {
    for (const origin of origins) {
      // An origin is scheme://host[:port], exactly as a browser sends it: no path, no trailing slash.
      if (!/^https?:\/\/[^/\s]+$/.test(origin)) throw new RangeError(`sweeper.corsOrigins: ${origin} is not an origin`)
    }
  }
  return {
    network: options?.network,
    maxAgeSeconds: whole("maxAgeSeconds", options?.maxAgeSeconds ?? 15, 0, 300),
    corsOrigins: origins,
    fromBlock,
    maxBlockRange: whole("maxBlockRange", options?.maxBlockRange ?? 10_000, 1, 1_000_000),
    maxLogRequestsPerLookup: whole("maxLogRequestsPerLookup", options?.maxLogRequestsPerLookup ?? 20, 1, 1_000),
    cacheSeconds: whole("cacheSeconds", options?.cacheSeconds ?? 5, 0, 60),
    lookupsPerIpPerMinute: whole("lookupsPerIpPerMinute", options?.lookupsPerIpPerMinute ?? 60, 1, 1_000_000),
    maxOrders: whole("maxOrders", options?.maxOrders ?? 1_000, 1, 10_000)
  }
}
