import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { parsePhone } from "../../src/auth/phone"

const accepts = (input: string) => Effect.runSync(parsePhone(input))
const refuses = (input: string, regions?: Parameters<typeof parsePhone>[1]) =>
  Exit.isFailure(Effect.runSyncExit(parsePhone(input, regions)))

describe("parsePhone", () => {
  it.each([
    ["+14155552671", "+14155552671"],
    ["+1 415 555 2671", "+14155552671"],
    ["+1 (415) 555-2671", "+14155552671"],
    ["+1.415.555.2671", "+14155552671"],
    ["+1 416 967 1111", "+14169671111"], // Toronto, Canada
    ["+1 787 555 1234", "+17875551234"] // Puerto Rico
  ])("accepts %s as %s", (input, e164) => {
    expect(accepts(input)).toBe(e164)
  })

  it.each([
    ["+1 202 555 0100", "555-01XX fictional"],
    ["+1 202 555 0199", "555-01XX fictional"],
    ["+1 911 555 1234", "N11 area code"],
    ["+1 415 911 1234", "N11 exchange"],
    ["+1 415 411 1234", "N11 exchange"],
    ["+1 115 555 1234", "area code starting 1"],
    ["+1 015 555 1234", "area code starting 0"],
    ["+1 415 155 1234", "exchange starting 1"],
    ["+1 900 555 1234", "premium"],
    ["+1 800 555 1234", "toll-free"],
    ["+1 888 555 1234", "toll-free"],
    ["+1 500 555 1234", "personal"],
    ["+1 876 555 1234", "Jamaica shares +1"],
    ["+1 809 555 1234", "Dominican Republic shares +1"],
    ["+44 20 7946 0958", "United Kingdom"],
    ["4155552671", "no +1"],
    ["14155552671", "no +"],
    ["+1415555267", "9 digits"],
    ["+141555526711", "11 digits"],
    ["+1 415 555 2671 ext. 12", "extension"],
    ["+1 415 555 2671#12", "extension"],
    ["+1 415 ABC 2671", "letters"],
    ["", "empty"],
    ["+1", "+1 alone"]
  ])("refuses %s (%s)", (input) => {
    expect(refuses(input)).toBe(true)
  })

  it("honours the configured regions", () => {
    expect(refuses("+1 416 967 1111", ["US"])).toBe(true)
    expect(refuses("+1 415 555 2671", ["US"])).toBe(false)
  })
})
