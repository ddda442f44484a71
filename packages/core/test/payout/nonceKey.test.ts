import { keccak256, toHex } from "viem"
import { describe, expect, it } from "vitest"
import { PLAN_PAYOUT_NONCE_KEY } from "../../src/payout/planning"

describe("PLAN_PAYOUT_NONCE_KEY", () => {
  it("is the top 192 bits of keccak256 of its domain tag (written out in the source so that import hashes nothing)", () => {
    expect(PLAN_PAYOUT_NONCE_KEY).toBe(BigInt(keccak256(toHex("walletgate/plan-payout/v1"))) >> 64n)
  })
})
