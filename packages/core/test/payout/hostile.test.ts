import { type Address, getAddress, type Hex, parseEther, toHex } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshAddress } from "../devnet/shared"
import { startPayoutFixture, testApiKey } from "./fixture"

// A payout names any contract as its asset: the contract chooses what the gateway reads from it. Whatever it answers,
// the request is answered at once and the gateway keeps serving everyone else (issue 31, item 1).
type Fixture = Awaited<ReturnType<typeof startPayoutFixture>>

/** Runtime code that answers every call with `word`: PUSH32 word PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN. */
const oneWordCode = (word: bigint): Hex => `0x7f${toHex(word, { size: 32 }).slice(2)}60005260206000f3`

/**
 * Runtime code that answers `word` to a call of 4 or 36 bytes (`decimals()`, `balanceOf(address)`) and reverts a
 * `transfer(address,uint256)` (68 bytes of call data) with `Error(string)` of `length` bytes (zeros):
 * CALLDATASIZE PUSH1 68 EQ PUSH1 48 JUMPI, the one-word answer, then at 48 JUMPDEST, the selector at 0, the offset
 * (32) at 4, the length at 36, and REVERT of 68 + length bytes from 0.
 */
const revertingTransferCode = (word: bigint, length: number): Hex => {
  const push3 = (value: number) => `62${value.toString(16).padStart(6, "0")}`
  const jumpToRevert = "36604414603057"
  const answer = oneWordCode(word).slice(2)
  const selector = "5b6308c379a060e01b600052"
  const offsetAndLength = `6020600452${push3(length)}602452`
  return `0x${jumpToRevert}${answer}${selector}${offsetAndLength}${push3(length + 68)}6000fd`
}

describe("hostile tokens: bounded work whatever a contract answers (anvil + alto)", () => {
  let f: Fixture
  let key = ""
  let otherKey = ""
  let account: Address
  beforeAll(async () => {
    f = await startPayoutFixture({
      accounts: [{ accountKey: "hostile" }, { accountKey: "bystander" }],
      apiKeys: (accounts) => {
        const [mine, theirs] = accounts.map((one) => testApiKey([one.address]))
        if (mine === undefined || theirs === undefined) throw new Error("two keys")
        key = mine.key
        otherKey = theirs.key
        return [mine.record, theirs.record]
      }
    })
    account = f.automationAccounts[0]?.address as Address
    await f.fund(account, parseEther("1"))
  })
  afterAll(async () => {
    await f?.stop()
  })

  /** A token at a fresh address with `code`. */
  const tokenWith = async (code: Hex): Promise<Address> => {
    const token = getAddress(freshAddress())
    await f.devnet.anvilRequest("anvil_setCode", [token, code])
    return token
  }

  /**
   * Runs `request` while another tenant reads its payouts, one request after another: how long `request` took, and
   * the slowest of the other tenant's answers meanwhile (each must have been answered, not queued behind it).
   */
  const whileAnotherClientIsServed = async <A>(request: () => Promise<A>) => {
    let done = false
    let slowest = 0
    let served = 0
    const other = (async () => {
      while (!done) {
        const started = performance.now()
        const answer = await f.call("GET", `/v1/anvil/tx/0x${"ab".repeat(32)}`, undefined, { "x-api-key": otherKey })
        expect(answer.body.code).toBe("payout_not_found")
        slowest = Math.max(slowest, performance.now() - started)
        served++
        // An in-process answer can come in microtasks alone: yield, as requests arriving over a socket would.
        await new Promise((resolve) => setImmediate(resolve))
      }
    })()
    const started = performance.now()
    const answer = await request()
    const took = performance.now() - started
    done = true
    await other
    return { answer, took, slowest, served }
  }

  const disperse = (body: unknown) =>
    f.call("POST", `/v1/anvil/account/${account}/payout/disperse`, body, { "x-api-key": key })

  it("refuses decimals() of 3,000,000 or 2^64 (not a uint8) as 422 asset_decimals_unknown in both units, at once", async () => {
    const dave = freshAddress()
    for (const decimals of [2n ** 64n, 3_000_000n]) {
      const token = await tokenWith(oneWordCode(decimals))
      for (const body of [
        { assets: [token], amounts: ["1"], recipients: [dave] },
        { assets: [token], amounts: ["1"], recipients: [dave], unit: "base" }
      ]) {
        const { answer, took, slowest, served } = await whileAnotherClientIsServed(() => disperse(body))
        expect([answer.status, answer.body.code, answer.body.answer]).toEqual([
          422,
          "asset_decimals_unknown",
          "not_uint8"
        ])
        expect(answer.body.asset).toBe(token)
        // Generous margins for a shared machine: the old code took seconds to minutes here, blocking everyone.
        expect(took).toBeLessThan(1_000)
        expect(served).toBeGreaterThan(0)
        expect(slowest).toBeLessThan(1_000)
      }
    }
    // Nothing was signed or recorded: no payout of the account exists.
    expect(await f.executed(account)).toHaveLength(0)
  })

  it("refuses a decimals() answer that is not one word, and pays a token of 255 decimals with its token amounts", async () => {
    const dave = getAddress(freshAddress())
    // Two words: 6, then 6 again (RETURN of 64 bytes).
    const twoWords = await tokenWith("0x6006600052600660205260406000f3")
    const refused = await disperse({ assets: [twoWords], amounts: ["1"], recipients: [dave], unit: "base" })
    expect([refused.status, refused.body.code, refused.body.answer]).toEqual([
      422,
      "asset_decimals_unknown",
      "not_uint8"
    ])
    const widest = await tokenWith(oneWordCode(255n))
    const paid = await disperse({ assets: [widest], amounts: ["1"], recipients: [dave], unit: "base" })
    expect(paid.status).toBe(200)
    expect(paid.body.transfers).toEqual([
      { asset: widest, recipient: dave, amount: "1", decimals: 255, tokenAmount: `0.${"0".repeat(254)}1` }
    ])
  })

  it("answers a transfer that reverts with 1 MB of data as 422 call_reverted with a bounded reason, at once", async () => {
    const dave = freshAddress()
    const token = await tokenWith(revertingTransferCode(18n, 1_048_576))
    for (const unit of ["token", "base"]) {
      const amount = unit === "token" ? "0.000000000000000001" : "1"
      const { answer, took, slowest, served } = await whileAnotherClientIsServed(() =>
        disperse({ assets: [token], amounts: [amount], recipients: [dave], unit })
      )
      expect([answer.status, answer.body.code, answer.body.index]).toEqual([422, "call_reverted", 0])
      expect(String(answer.body.reason).length).toBeLessThanOrEqual(256)
      expect(String(answer.body.detail).length).toBeLessThan(400)
      expect(took).toBeLessThan(1_000)
      expect(served).toBeGreaterThan(0)
      expect(slowest).toBeLessThan(1_000)
    }
  })
})
