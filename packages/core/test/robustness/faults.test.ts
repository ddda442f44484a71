import {
  AccountLocks,
  embeddedPorts,
  GasLedger,
  type Gateway,
  IdempotencyStore,
  makeGateway,
  type NetworkConfig,
  Networks,
  OtpStore,
  SecureRandom,
  SmsSender,
  SpendPolicy,
  StoreUnavailable,
  TransactionLog
} from "@walletgate/core"
import { accountSalt, automationIdentity, deriveOwnerKey } from "@walletgate/core/chain"
import { type LocalNetwork, predictAccountAddress, startLocalNetwork } from "@walletgate/core/devnet"
import { hashApiKey } from "@walletgate/core/payout"
import { SmsOutbox } from "@walletgate/core/testing"
import { Effect, Fiber, Layer, ManagedRuntime } from "effect"
import { parseEther, zeroAddress } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BatchRelay } from "../../src/chain/BatchRelay"
import { startRpcProxy } from "./rpcProxy"

const post = async (gateway: Gateway, path: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await gateway.fetch(
    new Request(`http://gateway.test${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body)
    })
  )
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>
  }
}
/** `service` with every method failing with `StoreUnavailable` while `down()` holds: a store that is away. */
const failingWhile = <S extends object>(down: () => boolean, service: S): S =>
  Object.fromEntries(
    Object.entries(service).map(([name, method]) => [
      name,
      (...args: ReadonlyArray<unknown>) =>
        Effect.suspend(() =>
          down()
            ? Effect.fail(new StoreUnavailable({ operation: name }))
            : (method as (...args: ReadonlyArray<unknown>) => Effect.Effect<unknown, StoreUnavailable>)(...args)
        )
    ])
  ) as S

const timed = async <A>(run: () => Promise<A>) => {
  const started = Date.now()
  const value = await run()
  return { value, ms: Date.now() - started }
}

describe("faults in the SMS provider and the store", () => {
  it("an SMS provider that hangs is a 502 within the policy's bound, and sign-in recovers", async () => {
    let hang = true
    const outbox = new SmsOutbox()
    const hanging = Layer.effect(
      SmsSender,
      Effect.gen(function* () {
        const working = yield* SmsSender
        return SmsSender.of({ send: (to, body) => (hang ? Effect.never : working.send(to, body)) })
      })
    ).pipe(Layer.provide(outbox.layer))
    const gateway = makeGateway({
      ports: Layer.mergeAll(embeddedPorts({ otp: { smsTimeoutSeconds: 1 } }), hanging),
      loggers: []
    })
    try {
      const failed = await timed(() => post(gateway, "/functions/v1/signInWithOTP", { phone: "+14155552671" }))
      expect([failed.value.status, failed.value.body.code]).toEqual([502, "sms_delivery_failed"])
      expect(failed.ms).toBeLessThan(3000)
      hang = false
      // No resend wait was left behind: the user can ask again at once, and the code works.
      expect((await post(gateway, "/functions/v1/signInWithOTP", { phone: "+14155552671" })).status).toBe(200)
      const code = outbox.latestCode("+14155552671")
      expect((await post(gateway, "/functions/v1/verifyOTP", { phone: "+14155552671", token: code })).status).toBe(200)
    } finally {
      await gateway.dispose()
    }
  })

  it("a store that fails is a 503 with Retry-After, and service resumes when it recovers", async () => {
    let failing = true
    const flaky = Layer.effect(
      OtpStore,
      Effect.gen(function* () {
        const inner = yield* OtpStore
        const guard = <A>(effect: Effect.Effect<A, StoreUnavailable>): Effect.Effect<A, StoreUnavailable> =>
          Effect.suspend(() => (failing ? Effect.fail(new StoreUnavailable({ operation: "otp" })) : effect))
        return OtpStore.of({
          issue: (...args) => guard(inner.issue(...args)),
          activate: (...args) => guard(inner.activate(...args)),
          withdraw: (...args) => guard(inner.withdraw(...args)),
          consume: (...args) => guard(inner.consume(...args))
        })
      })
    ).pipe(Layer.provide(OtpStore.memory))
    const gateway = makeGateway({
      ports: Layer.mergeAll(
        embeddedPorts(),
        SmsSender.console(() => undefined),
        flaky
      ),
      loggers: []
    })
    try {
      const down = await post(gateway, "/functions/v1/signInWithOTP", { phone: "+14155552671" })
      expect([down.status, down.body.code, down.headers.get("retry-after")]).toEqual([503, "store_unavailable", "1"])
      failing = false
      expect((await post(gateway, "/functions/v1/signInWithOTP", { phone: "+14155552671" })).status).toBe(200)
    } finally {
      await gateway.dispose()
    }
  })
})

describe("faults between the gateway and the chain", () => {
  const MASTER = "faults-test-master-secret-0123456789abcdef"
  const FAULTS = automationIdentity("faults")
  const API_KEY = "wg_test_faults_key_0000000000000000000000000000000000"
  const recipient = "0x000000000000000000000000000000000000bEEF"
  let local: LocalNetwork
  let proxy: Awaited<ReturnType<typeof startRpcProxy>>
  let gateway: Gateway
  let account: `0x${string}`
  let storesDown = false
  // The memory stores, away while `storesDown` holds: what a Redis outage looks like to the gateway.
  const flakyStores = Layer.mergeAll(
    Layer.effect(
      IdempotencyStore,
      Effect.map(Effect.service(IdempotencyStore), (inner) => failingWhile(() => storesDown, inner))
    ).pipe(Layer.provide(IdempotencyStore.memory)),
    Layer.effect(
      TransactionLog,
      Effect.map(Effect.service(TransactionLog), (inner) => failingWhile(() => storesDown, inner))
    ).pipe(Layer.provide(TransactionLog.memory))
  )
  const ports = (network: Partial<NetworkConfig>) =>
    Layer.mergeAll(
      embeddedPorts({
        masterSecret: MASTER,
        networks: [{ ...local.network, rpcUrl: proxy.url, ...network }],
        apiKeys: [
          {
            id: API_KEY.slice(8, 20),
            mode: "test",
            hash: hashApiKey(API_KEY),
            networks: ["anvil"],
            accounts: [account.toLowerCase()],
            createdAt: 0
          }
        ],
        automationAccounts: [
          {
            address: account,
            network: "anvil",
            accountKey: "faults",
            plan: {
              asset: zeroAddress,
              recipients: [{ address: recipient, shareBps: 10_000 }],
              minimumPayout: "1",
              reserve: "0"
            }
          }
        ]
      }),
      flakyStores
    )

  beforeAll(async () => {
    local = await startLocalNetwork()
    proxy = await startRpcProxy(local.anvil.rpcUrl)
    const owner = privateKeyToAccount(deriveOwnerKey(MASTER, FAULTS)).address
    account = await predictAccountAddress(local.publicClient, local.contracts.walletFactory, owner, accountSalt(FAULTS))
    await local.setBalance(account, parseEther("1"))
    gateway = makeGateway({
      ports: ports({ rpcTimeoutMs: 300 }),
      loggers: []
    })
  })
  afterAll(async () => {
    await gateway.dispose()
    await proxy.stop()
    await local.stop()
  })

  const payout = (headers: Record<string, string> = {}) =>
    post(gateway, `/v1/anvil/account/${account}/payout/disperse`, {}, { "x-api-key": API_KEY, ...headers })
  const paid = () => local.publicClient.getBalance({ address: recipient })

  it.each([
    ["down", { _tag: "down" } as const],
    ["slow", { _tag: "slow", ms: 2000 } as const],
    ["answering garbage", { _tag: "garbage" } as const]
  ])("a node that is %s is a bounded 503 upstream_unavailable, and nothing moves", async (_name, mode) => {
    proxy.set(mode)
    const answer = await timed(() => payout())
    proxy.set({ _tag: "pass" })
    expect([answer.value.status, answer.value.body.code]).toEqual([503, "upstream_unavailable"])
    expect(answer.value.headers.get("retry-after")).toBe("5")
    expect(answer.ms).toBeLessThan(5000)
    expect(await paid()).toBe(0n)
  })

  it("when the node's answer to the broadcast is lost, the payout stands as submitted and is made exactly once", async () => {
    proxy.set({ _tag: "loseAnswerOf", method: "eth_sendRawTransaction" })
    const first = await payout({ "idempotency-key": "lost-answer" })
    proxy.set({ _tag: "pass" })
    expect([first.status, first.body.status]).toEqual([200, "submitted"])
    const receipt = await local.publicClient.waitForTransactionReceipt({ hash: first.body.txHash as `0x${string}` })
    expect(receipt.status).toBe("success")
    expect(await paid()).toBe(parseEther("1"))
    // A retry with the key replays the answer; one without it finds nothing left: paid once, recovered.
    const replay = await payout({ "idempotency-key": "lost-answer" })
    expect(replay.body).toEqual(first.body)
    const again = await payout()
    expect([again.status, again.body.code]).toEqual([422, "nothing_to_disperse"])
    expect(await paid()).toBe(parseEther("1"))
  })

  const relayer = () => privateKeyToAccount(local.network.relayerKey).address
  const relayerSent = () => local.publicClient.getTransactionCount({ address: relayer() })

  it("when the store fails just after the broadcast, the answer still carries the payout's id and hash; a retry with the key gets it again, one without pays nothing more", async () => {
    await local.setBalance(account, parseEther("1"))
    const [before, sentBefore] = [await paid(), await relayerSent()]
    proxy.set({
      _tag: "afterWorkOf",
      method: "eth_sendRawTransaction",
      hook: () => {
        storesDown = true
      }
    })
    const first = await payout({ "idempotency-key": "store-fails-after-broadcast" })
    proxy.set({ _tag: "pass" })
    storesDown = false
    expect(first.status).toBe(200)
    expect(first.body).toMatchObject({ status: "submitted", account, network: "anvil" })
    expect(first.body.id).toEqual(expect.any(String))
    expect(first.body.txHash).toMatch(/^0x[0-9a-f]{64}$/)
    await local.publicClient.waitForTransactionReceipt({ hash: first.body.txHash as `0x${string}` })

    // The store is back: the key answers with the same payout at once (never 409), and nothing is sent again.
    const retry = await timed(() => payout({ "idempotency-key": "store-fails-after-broadcast" }))
    expect(retry.value.status).toBe(200)
    expect(retry.value.headers.get("idempotent-replayed")).toBe("true")
    expect(retry.value.body).toMatchObject({ id: first.body.id, txHash: first.body.txHash })
    expect(retry.ms).toBeLessThan(5000)
    const keyless = await payout()
    expect([keyless.status, keyless.body.code]).toEqual([422, "nothing_to_disperse"])
    expect(await paid()).toBe(before + parseEther("1"))
    expect(await relayerSent()).toBe(sentBefore + 1)
  })

  it("pays once for one Idempotency-Key whichever spelling of the network and the address the path uses", async () => {
    await local.setBalance(account, parseEther("1"))
    const payee = "0x000000000000000000000000000000000000cafe"
    const body = { assets: [zeroAddress], amounts: ["1000"], recipients: [payee] }
    const headers = { "x-api-key": API_KEY, "idempotency-key": "one-payout-many-spellings" }
    const answers = []
    for (const path of [
      `/v1/anvil/account/${account}/payout/disperse`,
      `/v1/31337/account/${account}/payout/disperse`,
      `/v1/31337/account/${account.toLowerCase()}/payout/disperse`
    ]) {
      answers.push(await post(gateway, path, body, headers))
    }
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200])
    expect(new Set(answers.map((answer) => answer.body.txHash)).size).toBe(1)
    expect(answers.map((answer) => answer.headers.get("idempotent-replayed"))).toEqual([null, "true", "true"])
    await local.publicClient.waitForTransactionReceipt({ hash: answers[0]?.body.txHash as `0x${string}` })
    expect(await local.publicClient.getBalance({ address: payee })).toBe(1000n)
  })

  it("a node that never answers: health answers within 2 s, a payout gives up within its deadline and frees the account", async () => {
    // viem's own timeouts are left at their defaults (10 s a try, 3 tries): only the deadline bounds the wait.
    const patient = makeGateway({ ports: ports({ rpcDeadlineMs: 1000 }), loggers: [] })
    try {
      proxy.set({ _tag: "hang" })
      const health = await timed(() => patient.fetch(new Request("http://gateway.test/v1/health")))
      expect(health.value.status).toBe(503)
      expect(health.ms).toBeLessThan(2500)

      // The node hangs once the account's lock is held (estimating gas), then recovers.
      proxy.set({ _tag: "hangOn", method: "eth_estimateGas" })
      await local.setBalance(account, parseEther("1"))
      const path = `/v1/anvil/account/${account}/payout/disperse`
      const failed = await timed(() => post(patient, path, {}, { "x-api-key": API_KEY }))
      expect([failed.value.status, failed.value.body.code]).toEqual([503, "upstream_unavailable"])
      expect(failed.ms).toBeLessThan(2500)
      proxy.set({ _tag: "pass" })
      const next = await timed(() => post(patient, path, {}, { "x-api-key": API_KEY }))
      expect(next.value.status).toBe(200)
      expect(next.ms).toBeLessThan(2500)
      await local.publicClient.waitForTransactionReceipt({ hash: next.value.body.txHash as `0x${string}` })
    } finally {
      proxy.set({ _tag: "pass" })
      await patient.dispose()
    }
  })

  it("a payout interrupted while it waits on the node frees the account's lock at once", async () => {
    const runtime = ManagedRuntime.make(
      BatchRelay.layer().pipe(
        Layer.provideMerge(
          Layer.mergeAll(
            AccountLocks.memory,
            TransactionLog.memory,
            SpendPolicy.layer.pipe(Layer.provide(GasLedger.memory)),
            SecureRandom.crypto,
            Networks.layer([{ ...local.network, rpcUrl: proxy.url }])
          )
        )
      )
    )
    try {
      const network = await runtime.runPromise(
        Effect.map(Effect.service(Networks), (networks) => networks.resolve("anvil"))
      )
      if (network === undefined) throw new Error("anvil is served")
      proxy.set({ _tag: "hangOn", method: "eth_estimateGas" })
      const submission = runtime.runFork(
        Effect.flatMap(Effect.service(BatchRelay), (relay) =>
          relay.submit({
            network,
            owner: privateKeyToAccount(deriveOwnerKey(MASTER, FAULTS)),
            salt: accountSalt(FAULTS),
            payer: { kind: "payout", apiKey: "faults" },
            prepare: () =>
              Effect.succeed({
                calls: [{ to: recipient, value: 1n, data: "0x" as const }],
                kind: "payout" as const,
                owner: account,
                details: {}
              })
          })
        )
      )
      // The submission now holds the account's lock and waits on the node (its deadline is 5 s away).
      await new Promise((resolve) => setTimeout(resolve, 500))
      await runtime.runPromise(Fiber.interrupt(submission))
      const next = await runtime.runPromise(
        Effect.flatMap(Effect.service(AccountLocks), (locks) => locks.acquire(`31337:${account}`, 1000)).pipe(
          Effect.timeoutOption("500 millis")
        )
      )
      expect(next._tag).toBe("Some")
    } finally {
      proxy.set({ _tag: "pass" })
      await runtime.dispose()
    }
  })
})
