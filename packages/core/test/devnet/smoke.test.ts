import { describe, expect, it } from "vitest"
import { startDevnet } from "../../src/devnet/devnet"
import { checkErc4337Code } from "../../src/devnet/deploy"

describe("smoke", () => {
  it("starts", async () => {
    const t = Date.now()
    const devnet = await startDevnet()
    try {
      console.log("started in", Date.now() - t, "alto", devnet.alto.startupMs, devnet.deployment.steps.map((s) => `${s.contract} ${s.action} ${s.gasUsed ?? ""}`))
      const checks = await checkErc4337Code(devnet.publicClient)
      console.log(checks)
      expect(checks.every((c) => c.ok)).toBe(true)
    } finally {
      await devnet.stop()
    }
  }, 120_000)
})
