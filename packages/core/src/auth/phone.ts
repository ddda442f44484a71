import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type PhoneNumber, parsePhoneNumberFromString } from "libphonenumber-js/core"
import { phoneMetadata } from "./phoneMetadata.generated"

/** A phone number in E.164 form (`+1` and ten digits) that passed every rule of {@link parsePhone}. */
export const PhoneE164 = Schema.String.check(Schema.isPattern(/^\+1[2-9]\d{2}[2-9]\d{6}$/)).pipe(
  Schema.brand("PhoneE164")
)
/** A phone number in E.164 form that passed every rule of {@link parsePhone}. */
export type PhoneE164 = typeof PhoneE164.Type

/** A region (ISO 3166-1 alpha-2) whose numbers sign-in accepts. */
export type PhoneRegion = "US" | "CA" | "PR" | "VI" | "GU" | "AS" | "MP"

/** The default regions: the United States, its territories on the NANP, and Canada (docs/security.md). */
export const defaultPhoneRegions: ReadonlyArray<PhoneRegion> = ["US", "PR", "VI", "GU", "AS", "MP", "CA"]

// Separators people type inside a number; anything else (letters, "ext", "#") is refused.
const SEPARATORS = /[\s\-().]/g
// Toll-free (8NN with a repeated digit: 800, 822 … 888) and personal-communications (5NN) area codes.
const NON_GEOGRAPHIC = /^(?:8(?:00|22|33|44|55|66|77|88)|5(?:00|22|33|44|66|77|88))$/

/** The phone number is not a US or Canadian number we can text. Answered 400 `invalid_phone` by sign-in. */
export class InvalidPhone extends Schema.TaggedError<InvalidPhone>()("InvalidPhone", {
  reason: Schema.String
}) {}

/** A number as typed, without the separators people put in it (white space, `-`, `(`, `)`, `.`). */
export const compactPhone = (input: string): string => input.replace(SEPARATORS, "")

const refuse = (reason: string) => Effect.fail(new InvalidPhone({ reason }))

/** How {@link makeParsePhone} reads an E.164 string into libphonenumber-js's number (with some metadata). */
export type PhoneNumberReader = (e164: string) => PhoneNumber | undefined

/**
 * The phone rules of {@link parsePhone} over a given metadata reader: sign-in uses the sliced metadata, and the
 * tests compare it with libphonenumber-js's full metadata on random `+1` numbers.
 */
export const makeParsePhone =
  (read: PhoneNumberReader) =>
  (input: string, regions: ReadonlyArray<PhoneRegion> = defaultPhoneRegions) => {
    const compact = compactPhone(input)
    if (!/^\+1\d{10}$/.test(compact)) return refuse("expected +1 followed by 10 digits")
    const area = compact.slice(2, 5)
    const exchange = compact.slice(5, 8)
    const line = compact.slice(8)
    if (!/^[2-9]/.test(area) || !/^[2-9]/.test(exchange)) return refuse("area code and exchange start with 2-9")
    if (area.endsWith("11") || exchange.endsWith("11")) return refuse("N11 codes are service numbers")
    if (exchange === "555" && line.startsWith("01")) return refuse("555-01XX numbers are fictional")
    if (area === "900" || NON_GEOGRAPHIC.test(area))
      return refuse("premium, toll-free and personal numbers are refused")
    const parsed = read(compact)
    if (parsed === undefined || !parsed.isValid()) return refuse("not an assigned NANP number")
    const type = parsed.getType()
    if (type === "TOLL_FREE" || type === "PREMIUM_RATE" || type === "PERSONAL_NUMBER" || type === "SHARED_COST") {
      return refuse("premium, toll-free and personal numbers are refused")
    }
    const country = parsed.country
    if (country === undefined || !regions.some((region) => region === country)) {
      return refuse("only numbers of the United States and Canada are accepted")
    }
    return Effect.succeed(PhoneE164.make(compact))
  }

/**
 * Parses what a user typed into a callable NANP number of an allowed region, or fails with
 * {@link InvalidPhone}. `+1` alone is not "US or Canada": the number must parse, with the full metadata of the
 * accepted regions, to an allowed region and pass the NANP rules (area code and exchange `[2-9]XX`, no N11, no
 * 555-01XX, no premium 900, toll-free or personal numbers, no extension). Another +1 country's number (Jamaica,
 * the Dominican Republic…) matches none of the sliced regions and is refused as unassigned.
 */
export const parsePhone = makeParsePhone((e164) => parsePhoneNumberFromString(e164, phoneMetadata))

/** A phone number masked to its last four digits, for logs. */
export const maskPhone = (phone: string): string => `***${phone.slice(-4)}`
