import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type Address, getAddress, isAddress } from "viem"

/**
 * A token the sweeper takes on a network. `symbol` and `decimals` are the fallback for a token whose
 * own `symbol()` or `decimals()` cannot be read (a `bytes32` symbol, say); the contract's values win.
 */
export interface SupportedToken {
  readonly address: Address
  readonly symbol: string
  readonly decimals: number
}

/** The supported tokens of each network: what the lookups read and the order index follows. */
export class TokenRegistry extends Context.Service<
  TokenRegistry,
  {
    /** The supported tokens of `network` (a slug), in the configured order; none for a network without a list. */
    readonly tokens: (network: string) => Effect.Effect<ReadonlyArray<SupportedToken>>
  }
>()("@walletgate/core/TokenRegistry") {
  /** The lists of configuration, by network slug; throws a `RangeError` at start for a bad entry. */
  static readonly layer = (
    lists: Readonly<Record<string, ReadonlyArray<SupportedToken>>> = {}
  ): Layer.Layer<TokenRegistry> => {
    const checked = new Map(Object.entries(lists).map(([network, tokens]) => [network, checkList(network, tokens)]))
    return Layer.succeed(
      TokenRegistry,
      TokenRegistry.of({ tokens: (network) => Effect.succeed(checked.get(network) ?? []) })
    )
  }
}

const checkList = (network: string, tokens: ReadonlyArray<SupportedToken>): ReadonlyArray<SupportedToken> => {
  const seen = new Set<string>()
  return tokens.map((token) => {
    const where = `sweeper tokens of "${network}"`
    if (!isAddress(token.address, { strict: true }))
      throw new RangeError(`${where}: ${token.address} is not an address`)
    if (!Number.isInteger(token.decimals) || token.decimals < 0 || token.decimals > 77) {
      throw new RangeError(`${where}: decimals of ${token.address} must be a whole number from 0 to 77`)
    }
    if (token.symbol.trim() === "") throw new RangeError(`${where}: ${token.address} needs a symbol`)
    const address = getAddress(token.address)
    if (seen.has(address)) throw new RangeError(`${where}: ${address} is listed twice`)
    seen.add(address)
    return { address, symbol: token.symbol, decimals: token.decimals }
  })
}
