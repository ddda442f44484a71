import { devnetAccountIndexes } from "@walletgate/core/devnet"
import { describe, expect, it } from "vitest"
import { anvilAccount, demoAccountIndexes } from "../src/demo.ts"

describe("the playground's demo accounts", () => {
  it("pays the demo plan to accounts that neither the devnet (alto's executors and utility, the paymaster, the sweeper) nor the rest of the demo use", () => {
    const payees = demoAccountIndexes.payees.map((index) => anvilAccount(index).address)
    const { payees: _, ...demo } = demoAccountIndexes
    const used = [...Object.values(devnetAccountIndexes), ...Object.values(demo)]
      .flat()
      .map((index) => anvilAccount(index).address)
    // Alto's executors are among them: their balances move by every bundle's gas and refund.
    expect(used).toEqual(expect.arrayContaining([5, 6, 7, 8].map((index) => anvilAccount(index).address)))
    expect(new Set(payees).size).toBe(2)
    for (const payee of payees) expect(used).not.toContain(payee)
  })
})
