import { GasLedger } from "@walletgate/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type Address, getAddress, parseEther, zeroAddress } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshAddress } from "../devnet/shared"
import { startPayoutFixture, testApiKey, untilExecuted } from "./fixture"

// Plan payouts (`{}`) larger than one operation may be (devnet: anvil + alto, default spend limits): one payout per
// plan turn, split by recipient, part 0 on the account's plan payout nonce, the others on keys derived from the
// account and the turn; every recipient paid exactly once per turn whoever sends, retries or races.

type Fixture = Awaited<ReturnType<typeof startPayoutFixture>>
type Operation = { index: number; from: number; to: number; userOpHash?: string; status: string }

/** Recipients of a plan: 250 native transfers are 3 operations under the playground's ceiling (87, 87, 76). */
const RECIPIENTS = 250

/** What alto answers `eth_sendUserOperation` when its mempool holds as many of the sender's operations as it takes. */
const MEMPOOL_FULL = {
  code: -32602,
  message:
    "AA25 invalid account nonce: Maximum number of parallel user operations for that is allowed for this sender reached"
}

const names = ["keyed", "race", "partial", "resumed", "refused", "topped", "drained", "budget", "unreachable"] as const
type Name = (typeof names)[number]

/** The gateway's gas ledger, which the tests use as the rest of an API key's spending would: what the policy holds. */
const ledger = Effect.runSync(Effect.service(GasLedger).pipe(Effect.provide(GasLedger.memory)))
/** An API key's budget on the devnet's test network with the default limits: 50 M gas an hour. */
const KEY_BUDGET = { limit: 50_000_000, windowMs: 3_600_000 }

describe("plan payouts in several operations (anvil + alto)", () => {
  let f: Fixture
  // One key per account: each test's parts stay within the default budget of one API key (50 M gas an hour).
  const keys = {} as Record<Name, string>
  /** Each key's id: its budget's scope in the ledger. */
  const keyIds = {} as Record<Name, string>
  const account = {} as Record<Name, Address>
  const recipients = Object.fromEntries(
    names.map((name) => [name, Array.from({ length: RECIPIENTS }, () => getAddress(freshAddress()))])
  ) as Record<Name, Array<Address>>

  beforeAll(async () => {
    f = await startPayoutFixture({
      bundlerProxy: true,
      accounts: names.map((name) => ({
        accountKey: `plan-${name}`,
        plan: () => ({
          asset: zeroAddress,
          recipients: recipients[name].map((address) => ({ address, shareBps: 10_000 / RECIPIENTS })),
          minimumPayout: "1000",
          reserve: "0"
        })
      })),
      apiKeys: (accounts) =>
        accounts.map((one, index) => {
          const made = testApiKey([one.address])
          keys[names[index] as Name] = made.key
          keyIds[names[index] as Name] = made.record.id
          return made.record
        }),
      ports: (embedded) => Layer.mergeAll(embedded, Layer.succeed(GasLedger, ledger))
    })
    for (const [index, name] of names.entries()) account[name] = f.automationAccounts[index]?.address as Address
  })
  afterAll(async () => {
    await f?.stop()
  })

  const payout = (name: Name, idempotencyKey?: string) =>
    f.call(
      "POST",
      `/v1/anvil/account/${account[name]}/payout/disperse`,
      {},
      {
        "x-api-key": keys[name],
        ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey })
      }
    )
  const proxy = () => {
    if (f.proxy === undefined) throw new Error("the fixture has no bundler proxy")
    return f.proxy
  }
  const balances = (name: Name) => Promise.all(recipients[name].map((recipient) => f.balance(recipient)))
  /**
   * A `{}` of `name` whose part 0 is sent and a later part is not (the proxy set to refuse it): `502 outcome_unknown`.
   * Resolves once part 0 executed: the turn is taken, and the account's next `{}` is the next turn's, which waits
   * for this one.
   */
  const takenTurn = async (name: Name) => {
    const first = await payout(name)
    expect([first.status, first.body.code]).toEqual([502, "outcome_unknown"])
    expect(await untilExecuted(f, account[name], 1)).toHaveLength(1)
    return first
  }
  /**
   * Once a later part of `name`'s turn `id` can be sent again: the next `{}` sends it and waits for the turn (or finds
   * nothing left), which ends confirmed, each part executed once and each recipient paid once.
   */
  const finishesTurn = async (name: Name, id: unknown) => {
    const resumed = await payout(name)
    expect([
      [409, "payout_in_progress"],
      [422, "nothing_to_disperse"]
    ]).toContainEqual([resumed.status, resumed.body.code])
    expect((await f.final(account[name], id, keys[name])).body.status).toBe("confirmed")
    expect(await f.executed(account[name])).toHaveLength(3)
    const share = parseEther("1") / BigInt(RECIPIENTS)
    expect((await balances(name)).every((balance) => balance === share)).toBe(true)
  }

  it("pays every recipient once in 3 operations; the same `{}` retried with its key before, during and after adds nothing; the next turn pays again", async () => {
    await f.fund(account.keyed, parseEther("1"))
    const answers = await Promise.all(Array.from({ length: 5 }, () => payout("keyed", "keyed-1")))
    for (const answer of answers) expect(answer.status).toBe(200)
    expect(new Set(answers.map((answer) => answer.body.id)).size).toBe(1)
    const first = answers[0]
    const operations = first?.body.operations as ReadonlyArray<Operation>
    expect(operations.map((operation) => [operation.from, operation.to])).toEqual([
      [0, 87],
      [87, 174],
      [174, 250]
    ])
    expect(first?.body.hash).toBe(operations[0]?.userOpHash)
    const final = await f.final(account.keyed, first?.body.id, keys.keyed)
    expect(final.body).toMatchObject({ status: "confirmed", meta: { status: "paid" } })
    expect(await f.executed(account.keyed)).toHaveLength(3)
    const share = parseEther("1") / BigInt(RECIPIENTS)
    expect((await balances("keyed")).every((balance) => balance === share)).toBe(true)

    // After: the same payout, nothing more executed.
    const after = await payout("keyed", "keyed-1")
    expect([after.status, after.body.id]).toEqual([200, first?.body.id])
    expect(await f.executed(account.keyed)).toHaveLength(3)

    // The next turn: a new payout of what arrived since, each recipient paid once more.
    await f.fund(account.keyed, parseEther("0.5"))
    const next = await payout("keyed")
    expect(next.status).toBe(200)
    expect(next.body.id).not.toBe(first?.body.id)
    // Every part of it paid, the last one too: 76 transfers to recipients that exist now, estimated by the bundler after
    // simulating the earlier parts pending in its mempool (a warmer state than it may execute in) and bundled with one
    // of them. Signed with the bundler's estimate alone it ended `reverted`, out of gas, in every run.
    const nextFinal = await f.final(account.keyed, next.body.id, keys.keyed)
    expect(nextFinal.body).toMatchObject({ status: "confirmed", meta: { status: "paid" } })
    const executed = await f.executed(account.keyed)
    expect(executed.map((event) => event.args.success)).toEqual([true, true, true, true, true, true])
    const turnTwo = parseEther("0.5") / BigInt(RECIPIENTS)
    expect((await balances("keyed")).every((balance) => balance === share + turnTwo)).toBe(true)
  })

  it("runs one turn for 10 concurrent `{}` without a key: the others are 409 or the payout that ran, every recipient paid once", async () => {
    await f.fund(account.race, parseEther("1"))
    const answers = await Promise.all(Array.from({ length: 10 }, () => payout("race")))
    for (const answer of answers.filter((one) => one.status !== 200)) {
      expect([
        [409, "payout_in_progress"],
        [422, "nothing_to_disperse"]
      ]).toContainEqual([answer.status, answer.body.code])
    }
    const accepted = answers.filter((answer) => answer.status === 200)
    expect(accepted.length).toBeGreaterThan(0)
    const ids = new Set(accepted.map((answer) => answer.body.id))
    expect(ids.size).toBe(1)
    expect((await f.final(account.race, [...ids][0], keys.race)).body.status).toBe("confirmed")
    expect(await f.executed(account.race)).toHaveLength(3)
    const share = parseEther("1") / BigInt(RECIPIENTS)
    expect((await balances("race")).every((balance) => balance === share)).toBe(true)
  })

  it("answers partial when a later part's recipient reverts: the other parts paid, that part failed and not sent", async () => {
    const reverter = recipients.partial[150] as Address
    // PUSH1 0 PUSH1 0 REVERT: refuses every call, the native coin included.
    await f.devnet.anvilRequest("anvil_setCode", [reverter, "0x60006000fd"])
    await f.fund(account.partial, parseEther("1"))
    const answer = await payout("partial", "partial-1")
    expect(answer.status).toBe(200)
    const operations = answer.body.operations as ReadonlyArray<Operation>
    expect(operations[1]).toMatchObject({ status: "failed", reason: { code: "call_reverted", transfer: 150 } })
    expect(operations[1]?.userOpHash).toBeUndefined()
    const final = await f.final(account.partial, answer.body.id, keys.partial)
    expect(final.body).toMatchObject({ status: "partial", meta: { status: "failed" } })
    expect(await f.executed(account.partial)).toHaveLength(2)
    const share = parseEther("1") / BigInt(RECIPIENTS)
    const paid = await balances("partial")
    for (const [index, balance] of paid.entries()) {
      if (index !== 150) expect([index, balance]).toEqual([index, index >= 87 && index < 174 ? 0n : share])
    }
    // A retry with the key: the same payout, the failed part not sent.
    const again = await payout("partial", "partial-1")
    expect(again.body).toMatchObject({ id: answer.body.id })
    expect(await f.executed(account.partial)).toHaveLength(2)
  })

  it("fails as one operation would when part 0's recipient reverts: the turn not taken, nothing recorded; the next `{}` pays", async () => {
    const reverter = recipients.refused[10] as Address
    await f.devnet.anvilRequest("anvil_setCode", [reverter, "0x60006000fd"])
    await f.fund(account.refused, parseEther("1"))
    const refused = await payout("refused")
    expect([refused.status, refused.body.code, refused.body.index]).toEqual([422, "call_reverted", 10])
    expect(await f.executed(account.refused)).toHaveLength(0)
    // Nothing of it stands: the same turn, paid by the next request, once the recipient accepts.
    await f.devnet.anvilRequest("anvil_setCode", [reverter, "0x"])
    const paid = await payout("refused")
    expect(paid.status).toBe(200)
    expect((await f.final(account.refused, paid.body.id, keys.refused)).body.status).toBe("confirmed")
    expect(await f.executed(account.refused)).toHaveLength(3)
    const share = parseEther("1") / BigInt(RECIPIENTS)
    expect((await balances("refused")).every((balance) => balance === share)).toBe(true)
  })

  it("loses no part left unsent: the next `{}`, without the key, sends it, and the turn pays every recipient once", async () => {
    await f.fund(account.resumed, parseEther("1"))
    // Part 0 is sent; the others find the sender's operations at the bundler's limit until the request gives up.
    proxy().set({ _tag: "errorOn", method: "eth_sendUserOperation", ...MEMPOOL_FULL, skip: 1 })
    const first = await payout("resumed", "resumed-1")
    proxy().set({ _tag: "pass" })
    expect(first.status).toBe(502)
    expect(first.body).toMatchObject({ code: "outcome_unknown", id: expect.any(String) })
    // Another request, without the key: it finds the turn (its own, or the previous one) and sends the rest.
    const other = await payout("resumed")
    expect([
      [200, first.body.id],
      [409, undefined]
    ]).toContainEqual([other.status, other.status === 200 ? other.body.id : undefined])
    expect((await f.final(account.resumed, first.body.id, keys.resumed)).body.status).toBe("confirmed")
    expect(await f.executed(account.resumed)).toHaveLength(3)
    const share = parseEther("1") / BigInt(RECIPIENTS)
    expect((await balances("resumed")).every((balance) => balance === share)).toBe(true)
    // The key's retry: the same payout, nothing more sent.
    const retried = await payout("resumed", "resumed-1")
    expect([retried.status, retried.body.id]).toEqual([200, first.body.id])
    expect(await f.executed(account.resumed)).toHaveLength(3)
  })

  it("pays the balance read when the turn began: funds that arrive between its parts wait for the next turn", async () => {
    await f.fund(account.topped, parseEther("1"))
    let topped = false
    // Once part 0 is sent, more funds arrive.
    proxy().set({
      _tag: "afterWorkOf",
      method: "eth_sendUserOperation",
      hook: async () => {
        if (topped) return
        topped = true
        await f.fund(account.topped, parseEther("0.5"))
      }
    })
    const answer = await payout("topped")
    proxy().set({ _tag: "pass" })
    expect([answer.status, topped]).toEqual([200, true])
    expect(answer.body.totals).toMatchObject([{ asset: zeroAddress, amount: String(parseEther("1")) }])
    expect((await f.final(account.topped, answer.body.id, keys.topped)).body.status).toBe("confirmed")
    const share = parseEther("1") / BigInt(RECIPIENTS)
    expect((await balances("topped")).every((balance) => balance === share)).toBe(true)
    expect(await f.balance(account.topped)).toBe(parseEther("0.5"))
    // The next turn pays them.
    const next = await payout("topped")
    expect(next.body.totals).toMatchObject([{ asset: zeroAddress, amount: String(parseEther("0.5")) }])
    await f.final(account.topped, next.body.id, keys.topped)
  })

  it("never pays more than the turn's amounts when funds leave between its parts: a part the balance cannot pay is refused, the payout is partial", async () => {
    await f.fund(account.drained, parseEther("1"))
    let drained = false
    // Once part 0 is sent, the account is left 0.4 ETH, as if another transaction had taken the rest: part 0 (0.348)
    // can still be paid, whether it ran before or runs after, the parts after it (0.652 in all) cannot.
    proxy().set({
      _tag: "afterWorkOf",
      method: "eth_sendUserOperation",
      hook: async () => {
        if (drained) return
        drained = true
        await f.devnet.setBalance(account.drained, parseEther("0.4"))
      }
    })
    const answer = await payout("drained")
    proxy().set({ _tag: "pass" })
    expect(drained).toBe(true)
    const final = answer.status === 200 ? await f.final(account.drained, answer.body.id, keys.drained) : answer
    expect([final.status, final.body.status]).toEqual([200, "partial"])
    const share = parseEther("1") / BigInt(RECIPIENTS)
    const paid = await balances("drained")
    expect(paid.every((balance) => balance === 0n || balance === share)).toBe(true)
    // Part 0's 87 recipients paid (0.4 ETH covers it either way), not every recipient: no part paid from money gone.
    const paidCount = paid.filter((balance) => balance === share).length
    expect(paidCount).toBeGreaterThanOrEqual(87)
    expect(paidCount).toBeLessThan(RECIPIENTS)
  })

  it("answers the next `{}` with the cause, 429 not 409, while its turn's later part is refused for the key's gas budget; once the budget allows, that `{}` sends the parts and the turn pays every recipient once", async () => {
    await f.fund(account.budget, parseEther("1"))
    // The key's scope in the ledger (the spend policy's: chain id, then the key's id).
    const scope = `${f.devnet.network.chainId}:key:${encodeURIComponent(keyIds.budget)}`
    let spent: { readonly gas: number; readonly at: number } | undefined
    // Once part 0 is sent, the rest of the key's budget of this window is spent elsewhere.
    proxy().set({
      _tag: "afterWorkOf",
      method: "eth_sendUserOperation",
      hook: async () => {
        if (spent !== undefined) return
        const at = Date.now()
        const used = await Effect.runPromise(ledger.used(scope, "api_key", KEY_BUDGET.windowMs, at))
        spent = { gas: KEY_BUDGET.limit - used, at }
        const budget = [{ name: "api_key", limit: KEY_BUDGET.limit }] as const
        await Effect.runPromise(ledger.reserve(scope, budget, spent.gas, KEY_BUDGET.windowMs, at))
      }
    })
    const first = await takenTurn("budget")
    proxy().set({ _tag: "pass" })

    // Its unsent part cannot be sent: the answer says why, and when to come back, as the part's send was told.
    const refused = await payout("budget")
    expect([refused.status, refused.body.code, refused.body.budget]).toEqual([429, "gas_budget_exhausted", "api_key"])
    const retryAfter = Number(refused.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(KEY_BUDGET.windowMs / 1000)
    expect(await f.executed(account.budget)).toHaveLength(1)

    // The budget allows again: the next `{}` sends the turn's parts, and waits for them (or finds nothing left).
    const given = spent as NonNullable<typeof spent>
    await Effect.runPromise(ledger.release(scope, ["api_key"], given.gas, KEY_BUDGET.windowMs, given.at, Date.now()))
    await finishesTurn("budget", first.body.id)
  })

  it("answers the next `{}` 503, not 409, while its turn's later part cannot reach the bundler; once it answers, that `{}` sends the parts and the turn pays every recipient once", async () => {
    await f.fund(account.unreachable, parseEther("1"))
    // Once part 0 is sent, the bundler no longer answers.
    proxy().set({ _tag: "afterWorkOf", method: "eth_sendUserOperation", hook: () => proxy().set({ _tag: "down" }) })
    const first = await takenTurn("unreachable")
    const refused = await payout("unreachable")
    proxy().set({ _tag: "pass" })
    expect([refused.status, refused.body.code]).toEqual([503, "upstream_unavailable"])
    expect(await f.executed(account.unreachable)).toHaveLength(1)
    await finishesTurn("unreachable", first.body.id)
  })
})
