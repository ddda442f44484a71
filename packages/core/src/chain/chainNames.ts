/**
 * EIP-3770 short names (chainid.network's `shortName`) of common chains, and the names Paymagic's Patch Wallet
 * SDK sends for them (`polygonamoy`, `degen-chain`), each to its chain id. A request's `chain` may use any of
 * them for a network the gateway serves; the gateway's own slug and the decimal chain id work too.
 */
const CHAIN_NAMES: ReadonlyMap<string, number> = new Map([
  ["eth", 1],
  ["oeth", 10],
  ["bnb", 56],
  ["gno", 100],
  ["matic", 137],
  ["base", 8453],
  ["arb1", 42161],
  ["celo", 42220],
  ["avax", 43114],
  ["linea", 59144],
  ["sep", 11155111],
  ["basesep", 84532],
  ["oep", 11155420],
  ["arb-sep", 421614],
  ["amoy", 80002],
  ["polygonamoy", 80002],
  ["degen", 666666666],
  ["degen-chain", 666666666]
])

/** The chain id `name` stands for, if it is a known short name. */
export const chainIdOfName = (name: string): number | undefined => CHAIN_NAMES.get(name)
