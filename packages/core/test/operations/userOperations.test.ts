import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { type Address, encodeErrorResult, type Hash, type Hex, parseAbi } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bundlerEndpoints, type Network, Networks } from "../../src/chain/networks"
import { Bundler } from "../../src/operations/Bundler"
import { GasBudgetExhausted } from "../../src/operations/errors"
import { OperationLink } from "../../src/operations/idempotency"
import { userWalletIdentity } from "../../src/operations/identity"
import { KeyVault } from "../../src/operations/KeyVault"
import { type GasPayer, SpendPolicy } from "../../src/operations/SpendPolicy"
import type { SafeCall } from "../../src/operations/safeAccount"
import { UserOperations } from "../../src/operations/UserOperations"
import { SecureRandom } from "../../src/random/SecureRandom"
import { AccountLocks } from "../../src/state/AccountLocks"
import { GasLedger } from "../../src/state/GasLedger"
import { IdempotencyInFlight } from "../../src/state/IdempotencyStore"
import { TransactionLog, type TxRecord } from "../../src/state/TransactionLog"
import {
  type DevnetToken,
  deployDevnetToken,
  freshAddress,
  freshMasterSecret,
  paymasterDeposit as paymasterDepositOf,
  type SharedDevnet,
  sharedDevnet,
  userOperationEvents
} from "../devnet/shared"

let devnet: SharedDevnet
let network: Network
let token: DevnetToken
/** The signature of each operation sent to the bundler through the pipeline, refused or not, in order. */
const sends: Array<Hex> = []
let runtime: ManagedRuntime.ManagedRuntime<UserOperations | TransactionLog, never>

const run = <A, E>(effect: Effect.Effect<A, E, UserOperations | TransactionLog>) => runtime.runPromise(effect)
const runExit = <A, E>(effect: Effect.Effect<A, E, UserOperations | TransactionLog>) => runtime.runPromiseExit(effect)

const balanceOf = (address: Address) => token.balanceOf(address)
const mint = (to: Address, amount: bigint) => token.mint(to, amount)
const paymasterDeposit = () => paymasterDepositOf(devnet)

let users = 0
const newIdentity = () => userWalletIdentity("phone", `+1555000${String(users++).padStart(4, "0")}`)

const intent = (calls: ReadonlyArray<SafeCall>) => ({ calls, kind: "kernel" as const, owner: "app-1", details: {} })

/** The spender of the pipeline's operations here: a batch of app-1's user, within the test network's budgets. */
const spender: GasPayer = { kind: "batch", app: "app-1", user: "user-1" }

const submit = (identity: ReturnType<typeof newIdentity>, calls: ReadonlyArray<SafeCall>) =>
  UserOperations.use((ops) => ops.submit({ network, identity, intent: intent(calls), spender }))

/** Reads the status until it is final (20 s at most). */
const finalStatus = async (record: TxRecord) => {
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const status = await run(UserOperations.use((ops) => ops.status(record, network)))
    if (status.status !== "submitted") return status
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`operation ${record.userOpHash} not final`)
}

const safeOf = (identity: ReturnType<typeof newIdentity>) =>
  run(UserOperations.use((ops) => ops.accountOf(identity))).then((safe) => safe.address)

const executedEvents = (userOpHash: string) => userOperationEvents(devnet, { userOpHash: userOpHash as Hash })

beforeAll(async () => {
  devnet = await sharedDevnet()
  token = await deployDevnetToken(devnet, { name: "Test", symbol: "TST", decimals: 18 })
  const networks = Networks.layer([{ ...devnet.network, slug: "devnet" }])
  const resolved = await Effect.runPromise(Networks.use((n) => Effect.succeed(n.all)).pipe(Effect.provide(networks)))
  const first = resolved[0]
  if (first === undefined) throw new Error("no network")
  network = first
  expect(network.erc4337?.sponsor?.kind === "verifying" && network.erc4337.sponsor.signer.address).toBe(
    devnet.paymasterSigner.address
  )
  // The real bundler, with each operation it is sent noted in `sends`.
  const counted = Layer.effect(
    Bundler,
    Effect.gen(function* () {
      const bundler = yield* Bundler
      return Bundler.of({
        ...bundler,
        sendUserOperation: (chainId, op, entryPoint) =>
          Effect.sync(() => sends.push(op.signature)).pipe(
            Effect.andThen(bundler.sendUserOperation(chainId, op, entryPoint))
          )
      })
    })
  ).pipe(Layer.provide(Bundler.jsonRpc(bundlerEndpoints(resolved))))
  const ports = Layer.mergeAll(
    counted,
    KeyVault.derived(freshMasterSecret()),
    TransactionLog.memory,
    AccountLocks.memory,
    SecureRandom.crypto,
    SpendPolicy.layer.pipe(Layer.provide(GasLedger.memory))
  )
  runtime = ManagedRuntime.make(Layer.merge(UserOperations.layer().pipe(Layer.provide(ports)), ports))
}, 120_000)

afterAll(async () => {
  await runtime?.dispose()
})

describe("UserOperations on the devnet (anvil + alto)", () => {
  it("deploys a new wallet and runs 3 calls atomically; the Safe holds no ETH and the paymaster pays", async () => {
    const identity = newIdentity()
    const safe = await safeOf(identity)
    await mint(safe, 100n)
    const [a, b, c] = [freshAddress(), freshAddress(), freshAddress()]
    const depositBefore = await paymasterDeposit()
    const record = await run(
      submit(identity, [token.transferCall(a, 1n), token.transferCall(b, 2n), token.transferCall(c, 3n)])
    )
    expect(record.status).toBe("submitted")
    expect(record.userOpHash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(record.userOperation?.sender).toBe(safe)
    expect(record.userOperation?.factory?.toLowerCase()).toBe(
      devnet.deployment.contracts.safeProxyFactory.toLowerCase()
    )
    // Kept in the log, signed operation included, before the answer.
    expect(await run(TransactionLog.use((log) => log.find(record.id)))).toEqual(record)
    const final = await finalStatus(record)
    expect(final.status).toBe("confirmed")
    expect(final.txHash).toMatch(/^0x[0-9a-f]{64}$/)
    expect([await balanceOf(a), await balanceOf(b), await balanceOf(c), await balanceOf(safe)]).toEqual([
      1n,
      2n,
      3n,
      94n
    ])
    expect(await devnet.publicClient.getBalance({ address: safe })).toBe(0n)
    expect(await paymasterDeposit()).toBeLessThan(depositBefore)
    const settled = await run(TransactionLog.use((log) => log.find(record.id)))
    expect(settled?.status).toBe("confirmed")
    expect(settled?.txHash).toBe(final.txHash)
    console.info(`first operation with deployment (3 calls): ${settled?.gasUsed} gas`)
    // A second 3-call batch from the now deployed Safe.
    const second = await run(
      submit(identity, [token.transferCall(a, 1n), token.transferCall(b, 1n), token.transferCall(c, 1n)])
    )
    expect(second.userOperation?.factory).toBeUndefined()
    const secondFinal = await finalStatus(second)
    console.info(`3-call operation from a deployed Safe: ${secondFinal.record.gasUsed} gas`)
  })

  it("reports a revert in call 2 of 3 with its index and reason; nothing is recorded, sent or moved", async () => {
    const identity = newIdentity()
    const safe = await safeOf(identity)
    await mint(safe, 5n)
    const [a, b] = [freshAddress(), freshAddress()]
    const depositBefore = await paymasterDeposit()
    const exit = await runExit(
      submit(identity, [token.transferCall(a, 1n), token.transferCall(b, 1_000n), token.transferCall(a, 1n)])
    )
    // The test token's own error is not one the production decoder names: the reason is its revert data, whole.
    const insufficient = encodeErrorResult({
      abi: parseAbi(["error InsufficientBalance(address from, uint256 balance, uint256 needed)"]),
      errorName: "InsufficientBalance",
      args: [safe, 4n, 1_000n]
    })
    expect(exit).toEqual(Exit.fail(expect.objectContaining({ _tag: "CallReverted", index: 1, reason: insufficient })))
    expect(await balanceOf(a)).toBe(0n)
    expect(await devnet.publicClient.getCode({ address: safe })).toBeUndefined()
    expect(await paymasterDeposit()).toBe(depositBefore)
  })

  it("lands 8 concurrent operations of one wallet not yet deployed: the deploying one goes first, alone", async () => {
    const identity = newIdentity()
    const safe = await safeOf(identity)
    await mint(safe, 80n)
    const to = freshAddress()
    const records = await Promise.all(
      Array.from({ length: 8 }, () => run(submit(identity, [token.transferCall(to, 10n)])))
    )
    expect(new Set(records.map((record) => record.userOpHash)).size).toBe(8)
    expect(records.filter((record) => record.userOperation?.factory !== undefined)).toHaveLength(1)
    const finals = await Promise.all(records.map(finalStatus))
    expect(finals.map((final) => final.status)).toEqual(Array(8).fill("confirmed"))
    expect(await balanceOf(to)).toBe(80n)
  })

  it("lands 8 concurrent operations of one deployed wallet", async () => {
    const identity = newIdentity()
    const safe = await safeOf(identity)
    await mint(safe, 81n)
    await finalStatus(await run(submit(identity, [token.transferCall(freshAddress(), 1n)])))
    const to = freshAddress()
    const records = await Promise.all(
      Array.from({ length: 8 }, () => run(submit(identity, [token.transferCall(to, 10n)])))
    )
    const finals = await Promise.all(records.map(finalStatus))
    expect(finals.map((final) => final.status)).toEqual(Array(8).fill("confirmed"))
    expect(await balanceOf(to)).toBe(80n)
  })

  it("a status read leaves an operation the bundler holds to the bundler: no re-send while it is pending", async () => {
    const identity = newIdentity()
    const safe = await safeOf(identity)
    await mint(safe, 10n)
    await finalStatus(await run(submit(identity, [token.transferCall(freshAddress(), 1n)])))
    const to = freshAddress()
    // No block is mined meanwhile: the operation stays with the bundler (in its mempool or its bundle in the pool).
    await devnet.anvilRequest("evm_setAutomine", [false])
    const record = await run(submit(identity, [token.transferCall(to, 2n)]))
    try {
      for (let read = 0; read < 3; read++) {
        expect((await run(UserOperations.use((ops) => ops.status(record, network)))).status).toBe("submitted")
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    } finally {
      await devnet.anvilRequest("evm_setAutomine", [true])
      await devnet.anvilRequest("anvil_mine", ["0x1"])
    }
    expect((await finalStatus(record)).status).toBe("confirmed")
    // Sent once, when it was submitted: each read asked the bundler and re-sent nothing.
    expect(sends.filter((signature) => signature === record.userOperation?.signature)).toHaveLength(1)
    expect(await balanceOf(to)).toBe(2n)
  })

  it("an operation first read over 1,000 blocks after it was prepared: found where the bundler's receipt says", async () => {
    const identity = newIdentity()
    const safe = await safeOf(identity)
    await mint(safe, 10n)
    await finalStatus(await run(submit(identity, [token.transferCall(freshAddress(), 1n)])))
    const record = await run(submit(identity, [token.transferCall(freshAddress(), 3n)]))
    while ((await executedEvents(record.userOpHash as string)).length === 0) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    await devnet.anvilRequest("anvil_mine", ["0x3ea"])
    const final = await run(UserOperations.use((ops) => ops.status(record, network)))
    expect(final.status).toBe("confirmed")
    expect(final.txHash).toBe((await executedEvents(record.userOpHash as string))[0]?.transactionHash)
  })

  it("never executes the same signed operation twice, however often it is re-sent", async () => {
    const identity = newIdentity()
    const safe = await safeOf(identity)
    await mint(safe, 10n)
    const to = freshAddress()
    const record = await run(submit(identity, [token.transferCall(to, 7n)]))
    // Re-sent while pending and after inclusion (a retry after a lost answer, a status read after a reorg).
    await run(UserOperations.use((ops) => ops.resend(record, network)))
    await finalStatus(record)
    await run(UserOperations.use((ops) => ops.resend(record, network)))
    await run(UserOperations.use((ops) => ops.resend(record, network)))
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(await balanceOf(to)).toBe(7n)
    expect(await executedEvents(record.userOpHash as string)).toHaveLength(1)
  })

  it("links the record to the Idempotency-Key before sending; a retry re-sends the same operation (same hash)", async () => {
    const identity = newIdentity()
    const safe = await safeOf(identity)
    await mint(safe, 10n)
    const to = freshAddress()
    const linked: Array<{ id: string; txHash: string }> = []
    let sentWhenLinked: boolean | undefined
    const record = await run(
      submit(identity, [token.transferCall(to, 4n)]).pipe(
        Effect.provideService(OperationLink, {
          link: (operation) =>
            Effect.promise(async () => {
              linked.push(operation)
              // Nothing was sent yet: the bundler does not know the operation.
              sentWhenLinked =
                (
                  await fetch(devnet.bundlerUrl, {
                    method: "POST",
                    headers: { "content-type": "application/json" },
                    body: JSON.stringify({
                      jsonrpc: "2.0",
                      id: 1,
                      method: "eth_getUserOperationByHash",
                      params: [operation.txHash]
                    })
                  }).then((r) => r.json() as Promise<{ result: unknown }>)
                ).result !== null
            })
        })
      )
    )
    expect(linked).toEqual([{ id: record.id, txHash: record.userOpHash }])
    expect(sentWhenLinked).toBe(false)
    // The retry (idempotent's `recover`) finds the record by id and re-sends it: the same hash, executed once.
    const found = await run(TransactionLog.use((log) => log.find(record.id)))
    expect(found?.userOpHash).toBe(record.userOpHash)
    await run(UserOperations.use((ops) => ops.resend(found as TxRecord, network)))
    expect((await finalStatus(record)).status).toBe("confirmed")
    expect(await balanceOf(to)).toBe(4n)
  })

  it("sends nothing when the link fails or the spend check refuses", async () => {
    const identity = newIdentity()
    const safe = await safeOf(identity)
    await mint(safe, 10n)
    const to = freshAddress()
    const depositBefore = await paymasterDeposit()
    // A day budget of 100 000 gas: the operation's gas ceiling, above it, is refused by the spend policy, which the
    // pipeline applies itself to the spender it is given.
    const refused = await runExit(
      UserOperations.use((ops) =>
        ops.submit({
          network,
          identity,
          intent: intent([token.transferCall(to, 1n)]),
          spender: { kind: "batch", app: "app-refused", user: "user-1", gasPerDay: 100_000 }
        })
      )
    )
    const refusal = Exit.isFailure(refused) ? Cause.squash(refused.cause) : undefined
    expect(refusal).toBeInstanceOf(GasBudgetExhausted)
    expect(refusal).toMatchObject({ budget: "app_day" })
    const unlinked = await runExit(
      submit(identity, [token.transferCall(to, 1n)]).pipe(
        Effect.provideService(OperationLink, { link: () => Effect.fail(new IdempotencyInFlight()) })
      )
    )
    expect(Exit.isFailure(unlinked)).toBe(true)
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(await balanceOf(to)).toBe(0n)
    expect(await devnet.publicClient.getCode({ address: safe })).toBeUndefined()
    expect(await paymasterDeposit()).toBe(depositBefore)
  })
})
