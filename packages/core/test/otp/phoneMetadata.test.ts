import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import fc from "fast-check"
import { parsePhoneNumberFromString } from "libphonenumber-js/max"
import { describe, expect, it } from "vitest"
import { phoneMetadataSource } from "../../scripts/phone-metadata"
import { defaultPhoneRegions, makeParsePhone, type PhoneRegion, parsePhone } from "../../src/auth/phone"

// The rules of parsePhone over libphonenumber-js's full metadata: what sign-in used before the slice.
const parseWithFullMetadata = makeParsePhone((e164) => parsePhoneNumberFromString(e164))

// The number accepted, or the reason it is refused: the reason is the answer's `detail`, so it must not move either.
const outcome = (parse: typeof parsePhone, input: string, regions: ReadonlyArray<PhoneRegion>) =>
  Effect.runSync(
    parse(input, regions).pipe(
      Effect.map(String),
      Effect.catch((error) => Effect.succeed(`refused: ${error.reason}`))
    )
  )

// Area codes of the +1 countries that walletgate refuses (Jamaica, the Dominican Republic, the Bahamas, Bermuda,
// Trinidad, the Caymans, Sint Maarten…) beside ones of the accepted regions, so that random numbers reach both.
const foreignAreas = ["242", "246", "264", "268", "284", "345", "441", "473", "649", "658", "664", "721", "758"]
const moreForeign = ["767", "784", "809", "829", "849", "868", "869", "876"]
const acceptedAreas = ["205", "212", "415", "416", "604", "684", "670", "671", "787", "939", "340", "867", "907"]
const digit = fc.constantFrom("0", "1", "2", "3", "4", "5", "6", "7", "8", "9")
const digits = (n: number) => fc.array(digit, { minLength: n, maxLength: n }).map((d) => d.join(""))
const area = fc.oneof(
  digits(3),
  fc.tuple(fc.constantFrom("2", "3", "4", "5", "6", "7", "8", "9"), digits(2)).map(([a, b]) => a + b),
  fc.constantFrom(...foreignAreas, ...moreForeign, ...acceptedAreas)
)
const exchange = fc.oneof(
  digits(3),
  fc.tuple(fc.constantFrom("2", "3", "4", "5", "6", "7", "8", "9"), digits(2)).map(([a, b]) => a + b)
)
const plusOne = fc.tuple(area, exchange, digits(4)).map(([a, e, l]) => `+1${a}${e}${l}`)
const regions = fc.subarray([...defaultPhoneRegions], { minLength: 1 })

describe("phone metadata slice", () => {
  it("accepts and refuses every random +1 number as the full metadata does, for the same reason, for any set of regions", () => {
    fc.assert(
      fc.property(plusOne, regions, (input, allowed) => {
        expect(outcome(parsePhone, input, allowed)).toBe(outcome(parseWithFullMetadata, input, allowed))
      }),
      { numRuns: 10_000 }
    )
  })

  it("places every number it accepts, by the full metadata, in an accepted region", () => {
    fc.assert(
      fc.property(plusOne, (input) => {
        const accepted = Effect.runSyncExit(parsePhone(input))
        if (Exit.isFailure(accepted)) return
        const full = parsePhoneNumberFromString(input)
        expect(full?.country).toMatch(/^[A-Z]{2}$/)
        expect(defaultPhoneRegions).toContain(full?.country)
      }),
      { numRuns: 5_000 }
    )
  })

  it("is the slice of the installed libphonenumber-js (regenerate with the core's build)", async () => {
    const { readFile } = await import("node:fs/promises")
    const committed = await readFile(new URL("../../src/auth/phoneMetadata.generated.ts", import.meta.url), "utf8")
    expect(committed).toBe(phoneMetadataSource())
  })
})
