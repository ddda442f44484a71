import {
  automateStatuses,
  type PartStatus,
  type PayoutStatus,
  partNonceKey,
  payoutStatusOf,
  splitPayout,
  type TransferKind
} from "@walletgate/core/payout"
import fc from "fast-check"
import { encodePacked, keccak256 } from "viem"
import { describe, expect, it } from "vitest"
import { planTurnId } from "../../src/payout/planning"
import {
  CEILING_FILL,
  MAX_PARTS,
  OPERATION_OVERHEAD_GAS,
  PART_CALL_OVERHEAD_GAS,
  partCallGasFloor,
  planPartNonceKey,
  splitPlan,
  TRANSFER_GAS
} from "../../src/payout/split"

const kinds = fc.array(fc.constantFrom<TransferKind>("native", "token"), { minLength: 1, maxLength: 5_000 })
const ceiling = fc.integer({ min: 1_000_000, max: 30_000_000 })

describe("splitPayout", () => {
  it("puts every transfer in exactly one operation, in order, each within the ceiling's share, the same every time", () => {
    fc.assert(
      fc.property(kinds, ceiling, (transfers, limit) => {
        const split = splitPayout(transfers, limit)
        expect(splitPayout(transfers, limit)).toEqual(split)
        if (split._tag === "TooManyParts") {
          expect(split.parts).toBeGreaterThan(MAX_PARTS)
          return
        }
        const budget = Math.floor(limit * CEILING_FILL) - OPERATION_OVERHEAD_GAS
        let next = 0
        for (const part of split.parts) {
          expect(part.from).toBe(next)
          expect(part.to).toBeGreaterThan(part.from)
          const gas = transfers.slice(part.from, part.to).reduce((sum, kind) => sum + TRANSFER_GAS[kind], 0)
          expect(gas).toBeLessThanOrEqual(budget)
          next = part.to
        }
        expect(next).toBe(transfers.length)
        expect(split.parts.length).toBeLessThanOrEqual(MAX_PARTS)
      }),
      { numRuns: 200 }
    )
  })

  it("signs each part of a split with a call gas floor that leaves the rest of the operation at least 400,000 gas under the ceiling", () => {
    fc.assert(
      fc.property(kinds, ceiling, (transfers, limit) => {
        const split = splitPayout(transfers, limit)
        if (split._tag === "TooManyParts" || split.parts.length < 2) return
        for (const part of split.parts) {
          const floor = partCallGasFloor(transfers.slice(part.from, part.to))
          expect(floor).toBeLessThanOrEqual(
            BigInt(Math.floor(limit * CEILING_FILL) - OPERATION_OVERHEAD_GAS + PART_CALL_OVERHEAD_GAS)
          )
        }
      }),
      { numRuns: 200 }
    )
    // The playground's first part: 87 native transfers, counted 3,480,000 gas, signed with at least 3,580,000.
    expect(partCallGasFloor(Array.from({ length: 87 }, () => "native" as const))).toBe(3_580_000n)
  })

  it("fills each operation greedily: the next transfer would not have fitted in the one before", () => {
    fc.assert(
      fc.property(kinds, ceiling, (transfers, limit) => {
        const split = splitPayout(transfers, limit)
        if (split._tag !== "Parts") return
        const budget = Math.floor(limit * CEILING_FILL) - OPERATION_OVERHEAD_GAS
        for (const part of split.parts.slice(0, -1)) {
          const gas = transfers.slice(part.from, part.to + 1).reduce((sum, kind) => sum + TRANSFER_GAS[kind], 0)
          expect(gas).toBeGreaterThan(budget)
        }
      }),
      { numRuns: 100 }
    )
  })

  it("splits the playground's 255 native transfers under its 5,000,000 ceiling, and 5,000 token transfers within the parts' bound", () => {
    const split = splitPayout(
      Array.from({ length: 255 }, () => "native"),
      5_000_000
    )
    expect(split).toEqual({
      _tag: "Parts",
      parts: [
        { from: 0, to: 87 },
        { from: 87, to: 174 },
        { from: 174, to: 255 }
      ]
    })
    const tokens = splitPayout(
      Array.from({ length: 5_000 }, () => "token"),
      5_000_000
    )
    expect(tokens._tag).toBe("Parts")
  })

  it("leaves a payout whole when the ceiling holds not even one counted transfer (its estimate is checked instead)", () => {
    expect(splitPayout(["native", "native"], 600_000)).toEqual({ _tag: "Parts", parts: [{ from: 0, to: 2 }] })
  })

  it("refuses more operations than a request sends", () => {
    expect(
      splitPayout(
        Array.from({ length: 5_000 }, () => "token"),
        1_000_000
      )._tag
    ).toBe("TooManyParts")
  })
})

describe("partNonceKey", () => {
  it("is the top 192 bits of keccak256 of its domain tag, the payout and the part: distinct per part and per payout", () => {
    const id = "6f1c2a9e-0000-4000-8000-000000000000"
    expect(partNonceKey(id, 3)).toBe(
      BigInt(keccak256(encodePacked(["string", "string", "uint32"], ["walletgate/payout-part/v1", id, 3]))) >> 64n
    )
    expect(partNonceKey(id, 3)).toBeLessThan(2n ** 192n)
    expect(new Set([partNonceKey(id, 0), partNonceKey(id, 1), partNonceKey(`${id.slice(0, -1)}1`, 0)]).size).toBe(3)
  })
})

describe("payoutStatusOf and Automate's meta.status", () => {
  const table: ReadonlyArray<readonly [ReadonlyArray<PartStatus>, PayoutStatus, string]> = [
    [["submitted"], "submitted", "pending"],
    [["confirmed"], "confirmed", "paid"],
    [["reverted"], "reverted", "failed"],
    [["dropped"], "dropped", "failed"],
    [["confirmed", "confirmed", "confirmed"], "confirmed", "paid"],
    [["confirmed", "submitted", "failed"], "submitted", "pending"],
    [["confirmed", "unsent"], "submitted", "pending"],
    [["confirmed", "failed", "confirmed"], "partial", "failed"],
    [["reverted", "confirmed"], "partial", "failed"],
    [["dropped", "confirmed"], "partial", "failed"],
    [["failed", "failed"], "failed", "failed"],
    [["failed", "reverted"], "failed", "failed"],
    [["dropped", "reverted"], "failed", "failed"]
  ]
  it.each(table)("%j → %s (meta.status %s)", (parts, status, meta) => {
    expect(payoutStatusOf(parts)).toBe(status)
    expect(automateStatuses[payoutStatusOf(parts)]).toBe(meta)
  })
})

describe("plan payouts in several operations", () => {
  const recipients = (count: number) =>
    Array.from({ length: count }, (_, index) => ({
      address: `0x${(index + 1).toString(16).padStart(40, "0")}`,
      shareBps: 1
    }))
  const plan = (asset: string, count: number) => ({
    asset,
    recipients: recipients(count),
    minimumPayout: "0",
    reserve: "0"
  })
  const native = "0x0000000000000000000000000000000000000000"
  const token = "0x00000000000000000000000000000000000000aa"

  it("splits a plan by its recipients, the same every time; one that fits one operation, or needs too many, is not split", () => {
    expect(splitPlan(plan(native, 250), 5_000_000)).toEqual([
      { from: 0, to: 87 },
      { from: 87, to: 174 },
      { from: 174, to: 250 }
    ])
    expect(splitPlan(plan(token, 100), 5_000_000)).toEqual([
      { from: 0, to: 50 },
      { from: 50, to: 100 }
    ])
    expect(splitPlan(plan(native, 87), 5_000_000)).toBeUndefined()
    expect(splitPlan(plan(native, 8_701), 5_000_000)).toBeUndefined()
  })

  it("derives each part's nonce key from the account, the turn and the part, under its own domain tag", () => {
    const account = "0x00000000000000000000000000000000000000bb"
    expect(planPartNonceKey(account, 7n, 2)).toBe(
      BigInt(
        keccak256(
          encodePacked(["string", "address", "uint256", "uint32"], ["walletgate/plan-payout-part/v1", account, 7n, 2])
        )
      ) >> 64n
    )
    const keys = [
      planPartNonceKey(account, 7n, 1),
      planPartNonceKey(account, 7n, 2),
      planPartNonceKey(account, 8n, 1),
      planPartNonceKey("0x00000000000000000000000000000000000000cc", 7n, 1)
    ]
    expect(new Set(keys).size).toBe(keys.length)
  })

  it("names a turn's payout by the chain, the account and the turn, shaped as a UUID", () => {
    const account = "0x00000000000000000000000000000000000000bb"
    const id = planTurnId(31337, account, 4n)
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    expect(planTurnId(31337, account, 4n)).toBe(id)
    const others = [planTurnId(31337, account, 5n), planTurnId(1, account, 4n), planTurnId(31337, native, 4n)]
    expect(others).not.toContain(id)
  })
})
