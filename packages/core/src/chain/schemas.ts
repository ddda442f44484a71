import * as Schema from "effect/Schema"
import { isAddress } from "viem"

/** `0x` and 40 hex digits, in one case (EIP-55's unchecksummed forms: all lower or all upper) or checksummed. */
const isAddressText = (value: string): boolean => {
  if (!/^0x[0-9a-fA-F]{40}$/.test(value)) return false
  const digits = value.slice(2)
  return digits === digits.toLowerCase() || digits === digits.toUpperCase() || isAddress(value, { strict: true })
}

/** An EVM address: `0x` and 40 hex digits; mixed case must carry a valid EIP-55 checksum. */
export const AddressString = Schema.String.check(
  Schema.makeFilter(isAddressText, {
    message: "Expected an address (mixed case must carry a valid EIP-55 checksum)"
  })
)

const UINT256_MAX = 2n ** 256n - 1n

/** A non-negative integer in uint256 range, as a decimal string without leading zeros. */
export const Uint256String = Schema.String.check(
  Schema.makeFilter((value: string) => /^(?:0|[1-9][0-9]{0,77})$/.test(value) && BigInt(value) <= UINT256_MAX, {
    message: "Expected a decimal string in uint256 range"
  })
)

/** Hex bytes: an even number of hex digits, `0x` prefix allowed. */
export const HexBytes = Schema.String.check(
  Schema.isPattern(/^(?:0x)?(?:[0-9a-fA-F]{2})*$/, { message: "Expected an even number of hex digits" })
)
