/**
 * The gas walletgate pays on one network (what the operator's paymaster sponsors), counted in
 * gas units over fixed windows. Every field is optional in `NetworkConfig.spend`; the defaults depend on
 * whether the network is a test network ({@link testnetSpendLimits}, {@link liveSpendLimits}).
 */
export interface SpendLimitsOptions {
  /** The length of a budget's window; default 3600 s, at most 7 days. */
  readonly windowSeconds?: number
  /** The most gas one wallet batch (`POST /v1/kernel/tx`) may be signed for. */
  readonly batchCeiling?: number
  /** The most gas one payout may be signed for. */
  readonly payoutCeiling?: number
  /** Gas per window for all of one app's batches. */
  readonly perApp?: number
  /** Gas per window for one user's batches at one app. */
  readonly perUser?: number
  /** Gas per window for the payouts of one API key. */
  readonly perApiKey?: number
  /** Gas per window for everything the network's paymaster sponsors. */
  readonly perNetwork?: number
}

/** {@link SpendLimitsOptions} with every default applied and every bound checked. */
export type SpendLimits = Required<SpendLimitsOptions>

/**
 * Defaults on test networks (the playground): a batch of up to 2 M gas (about 60 ERC-20 transfers), a payout of up
 * to 5 M (about 140 native transfers to fresh addresses), 10 M per user, 100 M per app, 50 M per API key and 500 M
 * for the whole network per hour.
 */
export const testnetSpendLimits: SpendLimits = {
  windowSeconds: 3600,
  batchCeiling: 2_000_000,
  payoutCeiling: 5_000_000,
  perUser: 10_000_000,
  perApp: 100_000_000,
  perApiKey: 50_000_000,
  perNetwork: 500_000_000
}

/**
 * Defaults on live networks: a batch of up to 1 M gas, a payout of up to 5 M, 3 M per user, 30 M per app, 20 M per
 * API key and 100 M for the whole network per hour (3 ETH at 30 gwei). Set them for your traffic and gas price.
 */
export const liveSpendLimits: SpendLimits = {
  windowSeconds: 3600,
  batchCeiling: 1_000_000,
  payoutCeiling: 5_000_000,
  perUser: 3_000_000,
  perApp: 30_000_000,
  perApiKey: 20_000_000,
  perNetwork: 100_000_000
}

const wholeNumber = (network: string, name: string, value: number, max: number): number => {
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new RangeError(`network ${network}: spend.${name} must be a whole number from 1 to ${max}, got ${value}`)
  }
  return value
}

/**
 * Applies the defaults of {@link SpendLimitsOptions} for a test or live network and checks the bounds; throws a
 * `RangeError` at start for a value out of range, or for a ceiling above a budget it counts against (such an
 * operation would be refused 429 for ever instead of 422).
 */
export const resolveSpendLimits = (
  network: string,
  testnet: boolean,
  options: SpendLimitsOptions = {}
): SpendLimits => {
  const defaults = testnet ? testnetSpendLimits : liveSpendLimits
  const max = Number.MAX_SAFE_INTEGER
  const limits: SpendLimits = {
    windowSeconds: wholeNumber(network, "windowSeconds", options.windowSeconds ?? defaults.windowSeconds, 604_800),
    batchCeiling: wholeNumber(network, "batchCeiling", options.batchCeiling ?? defaults.batchCeiling, max),
    payoutCeiling: wholeNumber(network, "payoutCeiling", options.payoutCeiling ?? defaults.payoutCeiling, max),
    perUser: wholeNumber(network, "perUser", options.perUser ?? defaults.perUser, max),
    perApp: wholeNumber(network, "perApp", options.perApp ?? defaults.perApp, max),
    perApiKey: wholeNumber(network, "perApiKey", options.perApiKey ?? defaults.perApiKey, max),
    perNetwork: wholeNumber(network, "perNetwork", options.perNetwork ?? defaults.perNetwork, max)
  }
  const above = (ceiling: "batchCeiling" | "payoutCeiling", budgets: ReadonlyArray<keyof SpendLimits>) => {
    for (const budget of budgets) {
      if (limits[ceiling] > limits[budget]) {
        throw new RangeError(`network ${network}: spend.${ceiling} must not exceed spend.${budget}`)
      }
    }
  }
  above("batchCeiling", ["perUser", "perApp", "perNetwork"])
  above("payoutCeiling", ["perApiKey", "perNetwork"])
  return limits
}
