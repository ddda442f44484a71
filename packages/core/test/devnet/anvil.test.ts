import { execFileSync } from "node:child_process"
import { createPublicClient, http, parseEther } from "viem"
import { describe, expect, it } from "vitest"
import { type AnvilInstance, startAnvil } from "../../src/devnet/anvil"
import { devAccount } from "../chain/fixture"

/** The anvil processes this test process has started and not reaped (Linux `ps`). */
const anvilChildren = (): Array<string> =>
  execFileSync("ps", ["--ppid", String(process.pid), "-o", "pid=,comm="], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.includes("anvil"))

/** Whether anything still answers JSON-RPC at `rpcUrl`. */
const answers = async (rpcUrl: string): Promise<boolean> => {
  try {
    await createPublicClient({ transport: http(rpcUrl, { retryCount: 0, timeout: 1_000 }) }).getChainId()
    return true
  } catch {
    return false
  }
}

describe("startAnvil", () => {
  it("starts nodes on distinct free ports with the chain id asked for, funds the dev accounts, and stops them", async () => {
    const started: Array<AnvilInstance> = []
    try {
      started.push(...(await Promise.all([startAnvil(), startAnvil({ chainId: 4_242 })])))
      const [first, second] = started
      if (first === undefined || second === undefined) throw new Error("two nodes expected")

      expect(anvilChildren()).toHaveLength(2)
      expect(first.port).not.toBe(second.port)
      expect(first.rpcUrl).toBe(`http://127.0.0.1:${first.port}`)
      const client = (rpcUrl: string) => createPublicClient({ transport: http(rpcUrl) })
      expect([first.chainId, await client(first.rpcUrl).getChainId()]).toEqual([31_337, 31_337])
      expect([second.chainId, await client(second.rpcUrl).getChainId()]).toEqual([4_242, 4_242])
      for (const index of [0, 9]) {
        expect(await client(first.rpcUrl).getBalance({ address: devAccount(index).address })).toBe(parseEther("10000"))
      }

      await first.stop()
      expect(await answers(first.rpcUrl)).toBe(false)
      expect(await answers(second.rpcUrl)).toBe(true)
      await first.stop() // a second stop is harmless
      await second.stop()
      expect(anvilChildren()).toEqual([])
    } finally {
      await Promise.all(started.map((node) => node.stop()))
    }
  })

  it("fails within its startup timeout, and leaves no process behind", async () => {
    await expect(startAnvil({ startupTimeoutMs: 1 })).rejects.toThrow(/did not answer in time/)
    expect(anvilChildren()).toEqual([])
  })
})
