import { GasLedger, IdempotencyStore, StoreUnavailable, TransactionLog } from "@walletgate/core"
import { Effect, Layer } from "effect"
import { type Address, getAddress, parseEther, zeroAddress } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshAddress } from "../devnet/shared"
import { oneTestKey, payingAllTo, startPayoutFixture } from "./fixture"

// Exactly once on the ERC-4337 pipeline: a payout's signed operation is recorded and linked to its Idempotency-Key
// before it reaches the bundler, so a fault between any two steps either sent nothing or leaves one operation that
// a retry re-sends as it was (same hash) and the EntryPoint executes once.
type Fixture = Awaited<ReturnType<typeof startPayoutFixture>>

/** Which store step fails while set. */
let failing: "save" | "link" | "all" | undefined
const failingWhen = <S extends object>(step: (name: string) => boolean, service: S): S =>
  Object.fromEntries(
    Object.entries(service).map(([name, method]) => [
      name,
      (...args: ReadonlyArray<unknown>) =>
        Effect.suspend(() =>
          step(name)
            ? Effect.fail(new StoreUnavailable({ operation: name }))
            : (method as (...args: ReadonlyArray<unknown>) => Effect.Effect<unknown, StoreUnavailable>)(...args)
        )
    ])
  ) as S
const flakyStores = Layer.mergeAll(
  Layer.effect(
    IdempotencyStore,
    Effect.map(Effect.service(IdempotencyStore), (inner) =>
      failingWhen((name) => failing === "all" || (failing === "link" && name === "link"), inner)
    )
  ).pipe(Layer.provide(IdempotencyStore.memory)),
  Layer.effect(
    TransactionLog,
    Effect.map(Effect.service(TransactionLog), (inner) =>
      failingWhen((name) => failing === "all" || (failing === "save" && name === "save"), inner)
    )
  ).pipe(Layer.provide(TransactionLog.memory))
)

/** The gateway's gas ledger, read by the tests: what the spend policy holds reserved. */
const ledger = Effect.runSync(Effect.service(GasLedger).pipe(Effect.provide(GasLedger.memory)))
/** Gas reserved on the devnet's chain (both networks of the fixture share chain id 31337) in this hour. */
const networkGasReserved = () => Effect.runPromise(ledger.used("31337", "network", 3_600_000, Date.now()))

describe("payout faults between recording and sending (anvil + alto behind a proxy)", () => {
  let f: Fixture
  let proxy: NonNullable<Fixture["proxy"]>
  const keys = oneTestKey()
  let account: Address
  const recipient = getAddress(freshAddress())
  beforeAll(async () => {
    f = await startPayoutFixture({
      bundlerProxy: true,
      accounts: [payingAllTo("faults", recipient)],
      apiKeys: keys.apiKeys,
      // A bundler that does not answer is given up after 1 s.
      network: (config) =>
        config.erc4337 === undefined ? config : { ...config, erc4337: { ...config.erc4337, bundlerTimeoutMs: 1_000 } },
      ports: (embedded) => Layer.mergeAll(embedded, flakyStores, Layer.succeed(GasLedger, ledger))
    })
    if (f.proxy === undefined) throw new Error("no bundler proxy")
    proxy = f.proxy
    account = f.automationAccounts[0]?.address as Address
  })
  afterAll(async () => {
    await f?.stop()
  })

  const payout = (headers: Record<string, string> = {}, path = `/v1/anvil/account/${account}/payout/disperse`) =>
    f.call("POST", path, {}, { "x-api-key": keys.key(), ...headers })
  const landed = async (id: unknown) => (await f.final(account, id, keys.key())).body
  /**
   * Runs `body` while the node mines an empty block every 200 ms, as a live chain does: `dropped` is judged one block
   * behind the head, so it needs a block after the one that used the nonce (automine makes none on its own).
   */
  const onALiveChain = async <A>(body: () => Promise<A>): Promise<A> => {
    const mining = setInterval(() => void f.devnet.anvilRequest("anvil_mine", ["0x1"]), 200)
    try {
      return await body()
    } finally {
      clearInterval(mining)
    }
  }

  /** The recipient's balance, the account's executions and the gas reserved on the network, before a test's payouts. */
  const snapshot = async () => ({
    before: await f.balance(recipient),
    executedBefore: (await f.executed(account)).length,
    reservedBefore: await networkGasReserved()
  })

  it("a store that fails between recording and sending: nothing is sent; a retry with the key pays once", async () => {
    await f.fund(account, parseEther("1"))
    for (const step of ["save", "link"] as const) {
      failing = step
      const refused = await payout({ "idempotency-key": `store-fault-${step}` })
      failing = undefined
      expect([refused.status, refused.body.code]).toEqual([503, "store_unavailable"])
      expect(await f.executed(account)).toHaveLength(0)
      expect(await f.balance(recipient)).toBe(0n)
    }
    const retried = await payout({ "idempotency-key": "store-fault-link" })
    expect(retried.status).toBe(200)
    expect((await landed(retried.body.id)).status).toBe("confirmed")
    expect(await f.balance(recipient)).toBe(parseEther("1"))
    expect(await f.executed(account)).toHaveLength(1)
  })

  it("a request that records and links its operation but never reaches the bundler: a retry re-sends the same operation, executed once", async () => {
    await f.fund(account, 1000n)
    const before = await f.balance(recipient)
    // The bundler never sees the operation (the request stands as submitted): what a crash before the send leaves.
    proxy.set({ _tag: "hangOn", method: "eth_sendUserOperation" })
    const first = await payout({ "idempotency-key": "never-sent" })
    proxy.set({ _tag: "pass" })
    expect([first.status, first.body.status]).toEqual([200, "submitted"])
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await f.balance(recipient)).toBe(before)
    const retry = await payout({ "idempotency-key": "never-sent" })
    expect(retry.body).toMatchObject({ id: first.body.id, userOpHash: first.body.userOpHash })
    expect((await landed(first.body.id)).status).toBe("confirmed")
    expect((await f.balance(recipient)) - before).toBe(1000n)
    expect(await f.executed(account)).toHaveLength(2)
  })

  it("when the bundler's answer is lost, the payout stands as submitted and is made exactly once", async () => {
    await f.fund(account, 2000n)
    const before = await f.balance(recipient)
    proxy.set({ _tag: "loseAnswerOf", method: "eth_sendUserOperation" })
    const first = await payout({ "idempotency-key": "lost-answer" })
    proxy.set({ _tag: "pass" })
    expect([first.status, first.body.status]).toEqual([200, "submitted"])
    expect((await landed(first.body.id)).status).toBe("confirmed")
    const replay = await payout({ "idempotency-key": "lost-answer" })
    expect(replay.body).toMatchObject({ id: first.body.id, userOpHash: first.body.userOpHash })
    const again = await payout()
    expect([again.status, again.body.code]).toEqual([422, "nothing_to_disperse"])
    expect((await f.balance(recipient)) - before).toBe(2000n)
    expect(await f.executed(account)).toHaveLength(3)
  })

  it("when the stores fail just after the send, the answer still carries the payout; a retry with the key gets it again", async () => {
    await f.fund(account, 3000n)
    const before = await f.balance(recipient)
    proxy.set({
      _tag: "afterWorkOf",
      method: "eth_sendUserOperation",
      hook: () => {
        failing = "all"
      }
    })
    const first = await payout({ "idempotency-key": "store-fails-after-send" })
    proxy.set({ _tag: "pass" })
    failing = undefined
    expect(first.status).toBe(200)
    expect(first.body).toMatchObject({ status: "submitted", account, network: "anvil" })
    expect(first.body.userOpHash).toMatch(/^0x[0-9a-f]{64}$/)
    const retry = await payout({ "idempotency-key": "store-fails-after-send" })
    expect(retry.status).toBe(200)
    expect(retry.headers.get("idempotent-replayed")).toBe("true")
    expect(retry.body).toMatchObject({ id: first.body.id, userOpHash: first.body.userOpHash })
    expect((await landed(first.body.id)).status).toBe("confirmed")
    expect((await f.balance(recipient)) - before).toBe(3000n)
    expect(await f.executed(account)).toHaveLength(4)
  })

  it("a replayed signed operation and one key under every spelling of the path pay once", async () => {
    await f.fund(account, 4000n)
    const before = await f.balance(recipient)
    const headers = { "idempotency-key": "one-payout-many-spellings" }
    const answers = []
    for (const path of [
      `/v1/anvil/account/${account}/payout/disperse`,
      `/v1/31337/account/${account}/payout/disperse`,
      `/v1/31337/account/${account.toLowerCase()}/payout/disperse`
    ]) {
      answers.push(await payout(headers, path))
    }
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200])
    expect(new Set(answers.map((answer) => answer.body.userOpHash)).size).toBe(1)
    const done = await landed(answers[0]?.body.id)
    expect(done.status).toBe("confirmed")
    // Anyone who saw the signed operation sends it again to the bundler: refused, never executed twice.
    const rpc = async (method: string, params: ReadonlyArray<unknown>) =>
      (await (
        await fetch(f.devnet.bundlerUrl, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params })
        })
      ).json()) as { result?: { userOperation?: unknown; entryPoint?: string }; error?: unknown }
    const seen = await rpc("eth_getUserOperationByHash", [answers[0]?.body.userOpHash])
    const sender = (seen.result?.userOperation as { readonly sender?: string } | undefined)?.sender
    expect(sender?.toLowerCase()).toBe(account.toLowerCase())
    const replayed = await rpc("eth_sendUserOperation", [seen.result?.userOperation, seen.result?.entryPoint])
    // Its nonce is spent (AA25); run alone, this test's operation also deployed the Safe, refused first (AA10).
    expect(replayed.error).toMatchObject({
      message: expect.stringMatching(/: (AA25 invalid account nonce|AA10 sender already constructed)$/)
    })
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect((await f.balance(recipient)) - before).toBe(4000n)
    expect(await f.executed(account)).toHaveLength(5)
  })

  it("a transfer: a store fault before the send sends nothing; one that never reached the bundler is re-sent by the retry, executed once", async () => {
    await f.fund(account, 5000n)
    const dave = getAddress(freshAddress())
    const executed = (await f.executed(account)).length
    const transfer = (idempotencyKey: string) =>
      f.call(
        "POST",
        `/v1/anvil/account/${account}/payout/transfer`,
        { asset: zeroAddress, amount: "5000", recipient: dave, unit: "base" },
        { "x-api-key": keys.key(), "idempotency-key": idempotencyKey }
      )
    for (const step of ["save", "link"] as const) {
      failing = step
      const refused = await transfer(`transfer-store-fault-${step}`)
      failing = undefined
      expect([refused.status, refused.body.code]).toEqual([503, "store_unavailable"])
    }
    expect(await f.balance(dave)).toBe(0n)
    proxy.set({ _tag: "hangOn", method: "eth_sendUserOperation" })
    const first = await transfer("transfer-store-fault-link")
    proxy.set({ _tag: "pass" })
    expect([first.status, first.body.status]).toEqual([200, "submitted"])
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await f.balance(dave)).toBe(0n)
    const retry = await transfer("transfer-store-fault-link")
    expect(retry.body).toMatchObject({ id: first.body.id, userOpHash: first.body.userOpHash })
    expect((await landed(first.body.id)).status).toBe("confirmed")
    expect(await f.balance(dave)).toBe(5000n)
    expect(await f.executed(account)).toHaveLength(executed + 1)
  })

  it("a plan payout whose nonce another plan payout used is reported dropped, and its gas is given back", async () => {
    await f.fund(account, 6000n)
    const { before, executedBefore, reservedBefore } = await snapshot()
    // Recorded and answered, but the bundler never gets it (as when a bundler loses its mempool).
    proxy.set({ _tag: "hangOn", method: "eth_sendUserOperation" })
    const lost = await payout()
    proxy.set({ _tag: "pass" })
    expect([lost.status, lost.body.status]).toEqual([200, "submitted"])
    expect(lost.body.totals).toMatchObject([{ asset: zeroAddress, amount: "6000" }])
    const lostGas = (await networkGasReserved()) - reservedBefore
    expect(lostGas).toBeGreaterThan(0)
    // More funds arrive; the next plan payout takes the same plan nonce (the lost one is not on the chain).
    await f.fund(account, 1000n)
    const taker = await payout()
    expect(taker.status).toBe(200)
    expect(taker.body.totals).toMatchObject([{ asset: zeroAddress, amount: "7000" }])
    expect(taker.body.userOpHash).not.toBe(lost.body.userOpHash)
    expect((await landed(taker.body.id)).status).toBe("confirmed")
    const takerGas = (await networkGasReserved()) - reservedBefore - lostGas
    // The lost payout can never land now: final `dropped`, not pending for ever; its reservation is given back.
    const dropped = await onALiveChain(() => landed(lost.body.id))
    expect(dropped).toMatchObject({ status: "dropped", userOpHash: lost.body.userOpHash })
    expect(dropped.txHash).toBeUndefined()
    expect((await networkGasReserved()) - reservedBefore).toBe(takerGas)
    // Read again (by another reader too): still dropped, nothing given back twice.
    expect((await landed(lost.body.id)).status).toBe("dropped")
    expect((await networkGasReserved()) - reservedBefore).toBe(takerGas)
    expect((await f.balance(recipient)) - before).toBe(7000n)
    expect(await f.executed(account)).toHaveLength(executedBefore + 1)
  })

  it("two plan payouts that sign the same operation are one payout: one record, one reservation, executed once", async () => {
    await f.fund(account, 8000n)
    const { before, executedBefore, reservedBefore } = await snapshot()
    // The first is recorded and answered, but the bundler never gets it; nothing changes on the chain after it.
    proxy.set({ _tag: "hangOn", method: "eth_sendUserOperation" })
    const first = await payout({ "idempotency-key": "same-operation-1" })
    proxy.set({ _tag: "pass" })
    expect([first.status, first.body.status]).toEqual([200, "submitted"])
    const oneGas = (await networkGasReserved()) - reservedBefore
    // The second reads the same nonce, balance, gas and fees: it signs the very same operation (one hash).
    const second = await payout({ "idempotency-key": "same-operation-2" })
    expect(second.status).toBe(200)
    expect(second.body.userOpHash).toBe(first.body.userOpHash)
    // The same operation is the same payout: its record, not a second one that would count it twice.
    expect(second.body.id).toBe(first.body.id)
    expect((await networkGasReserved()) - reservedBefore).toBe(oneGas)
    // Each key replays that one payout.
    const replay = await payout({ "idempotency-key": "same-operation-2" })
    expect(replay.body).toMatchObject({ id: first.body.id, userOpHash: first.body.userOpHash })
    expect((await landed(first.body.id)).status).toBe("confirmed")
    const byHash = await f.call("GET", `/v1/anvil/tx/${String(first.body.userOpHash)}`, undefined, {
      "x-api-key": keys.key()
    })
    expect([byHash.status, byHash.body.id]).toEqual([200, first.body.id])
    expect((await f.balance(recipient)) - before).toBe(8000n)
    expect(await f.executed(account)).toHaveLength(executedBefore + 1)
  })

  it("20 concurrent plan payouts: one pays, the replaced ones end dropped, and the losers' gas is given back", async () => {
    await f.fund(account, 20_000n)
    const { before, executedBefore, reservedBefore } = await snapshot()
    const answers = await Promise.all(Array.from({ length: 20 }, () => payout()))
    // Refused: another took the turn, nothing left, or (under load) the bundler's estimate outlived this file's 1 s
    // timeout; each before anything was sent.
    for (const answer of answers.filter((one) => one.status !== 200)) {
      expect([
        [409, "payout_in_progress"],
        [422, "nothing_to_disperse"],
        [503, "upstream_unavailable"]
      ]).toContainEqual([answer.status, answer.body.code])
    }
    // Requests that signed the same operation (same nonce, balance, gas and fees) are answered with its one record.
    // The bundler may take a later operation in place of an earlier one (a replacement at a higher fee): the replaced
    // payout was answered 200, and ends `dropped`. Exactly one ends `confirmed`.
    const accepted = answers.filter((answer) => answer.status === 200)
    const idOf = new Map(accepted.map((answer) => [answer.body.userOpHash, answer.body.id]))
    for (const answer of accepted) expect(answer.body.id).toBe(idOf.get(answer.body.userOpHash))
    const ids = [...new Set(accepted.map((answer) => answer.body.id))]
    const finals = await onALiveChain(() => Promise.all(ids.map(async (id) => (await landed(id)).status)))
    expect(finals.filter((status) => status === "confirmed")).toHaveLength(1)
    expect(finals.filter((status) => status !== "confirmed")).toEqual(finals.slice(1).map(() => "dropped"))
    // The payout that paid is found by its hash, though other requests recorded the same hash and were discarded.
    const paid = accepted.find((answer) => answer.body.id === ids[finals.indexOf("confirmed")])
    const byHash = await f.call("GET", `/v1/anvil/tx/${String(paid?.body.userOpHash)}`, undefined, {
      "x-api-key": keys.key()
    })
    expect([byHash.status, byHash.body.status]).toEqual([200, "confirmed"])
    const raceGas = (await networkGasReserved()) - reservedBefore
    // One payout alone, for the size of one reservation.
    await f.fund(account, 1000n)
    const alone = await payout()
    expect((await landed(alone.body.id)).status).toBe("confirmed")
    const oneGas = (await networkGasReserved()) - reservedBefore - raceGas
    expect(raceGas).toBeGreaterThan(0)
    // What stays reserved after the race is the winner's alone (the estimates of two payouts differ a little).
    expect(raceGas).toBeLessThan(oneGas * 1.5)
    expect((await f.balance(recipient)) - before).toBe(21_000n)
    expect(await f.executed(account)).toHaveLength(executedBefore + 2)
  })
})
