import { type App, TransactionLog } from "@walletgate/core"
import { hashClientSecret } from "@walletgate/core/auth"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type Address, type Hex, hashMessage, hashTypedData } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RedisServer, startRedisServer } from "../../../store-redis/test/redis-server"
import { CLIENT, freshAddress, OTHER_PHONE, startKernelFixture, TEST_PHONE } from "./fixture"

type Fixture = Awaited<ReturnType<typeof startKernelFixture>>
type Answer = Awaited<ReturnType<Fixture["call"]>>

/** A second app of the deployment: it must never see the first app's transactions. */
const OTHER_CLIENT = { clientId: "wgc_other", clientSecret: "wgs_other_secret" }
/** That app, granted `tel` in test mode as the first one is. */
const OTHER_APP: App = {
  clientId: OTHER_CLIENT.clientId,
  secretHash: hashClientSecret(OTHER_CLIENT.clientSecret),
  providers: ["tel"],
  testMode: true
}

/**
 * A client that speaks as Paymagic's Patch Wallet SDK does: `POST /v1/auth` with JSON credentials, the token as
 * Bearer, a new token and one more try on every 403 (the SDK retries without limit: here, at most 5 rounds, so a
 * loop shows as a failure instead of hanging), no retry on 401, and no token for `resolve`. `tx` reads `txHash`, and
 * when it is absent asks `POST /v1/kernel/txStatus {userOpHash}` again at once, four times at most, as the SDK does.
 */
const patchClient = (f: Fixture, client = CLIENT) => {
  let token = "not-yet-fetched"
  let tokenRequests = 0
  const refresh = async () => {
    tokenRequests++
    const granted = await f.call("POST", "/v1/auth", { client_id: client.clientId, client_secret: client.clientSecret })
    token = String(granted.body.access_token)
  }
  const post = async (path: string, body: unknown): Promise<Answer> => {
    for (let round = 0; round < 5; round++) {
      const answer = await f.call("POST", path, body, { authorization: `Bearer ${token}` })
      if (answer.status !== 403) return answer
      await refresh()
    }
    throw new Error(`${path}: still 403 after 5 new tokens (the SDK would loop)`)
  }
  const txStatus = async (userOpHash: unknown, retryCount = 0): Promise<{ txHash: string } | { error: string }> => {
    if (retryCount > 3) return { error: "Transaction stuck in pending state for too long, it may fail" }
    const answer = await post("/v1/kernel/txStatus", { userOpHash })
    if (answer.body.txHash) return { txHash: String(answer.body.txHash) }
    return txStatus(answer.body.userOpHash, retryCount + 1)
  }
  return {
    tx: (body: unknown) => post("/v1/kernel/tx", body),
    /** The SDK's `tx`: its `txHash`, read from the answer or by `txStatus`. */
    sdkTx: async (body: unknown) => {
      const answer = await post("/v1/kernel/tx", body)
      if (answer.body.txHash) return { answer, txHash: String(answer.body.txHash) }
      const status = await txStatus(answer.body.userOpHash)
      return { answer, ...status }
    },
    txStatus: (body: unknown) => post("/v1/kernel/txStatus", body),
    sign: (body: unknown) => post("/v1/kernel/sign", body),
    resolve: (userIds: ReadonlyArray<string>) => f.call("POST", "/v1/resolver", { userIds }),
    tokenRequests: () => tokenRequests,
    staleToken: () => {
      token = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"
    }
  }
}

const TYPED = {
  domain: {
    name: "Ether Mail",
    version: "1",
    chainId: 31337,
    verifyingContract: "0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC"
  },
  types: {
    Person: [
      { name: "name", type: "string" },
      { name: "wallet", type: "address" }
    ],
    Mail: [
      { name: "from", type: "Person" },
      { name: "to", type: "Person" },
      { name: "contents", type: "string" }
    ]
  },
  value: {
    from: { name: "Cow", wallet: "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826" },
    to: { name: "Bob", wallet: "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB" },
    contents: "Hello, Bob!"
  }
} as const
const typedForViem = { domain: TYPED.domain, types: TYPED.types, primaryType: "Mail", message: TYPED.value } as const

// Both profiles on the worker's shared devnet; each fixture has a master secret of its own, so its wallets are its own.
let redisServer: RedisServer
beforeAll(async () => {
  redisServer = await startRedisServer()
})
afterAll(async () => {
  await redisServer?.stop()
})

describe.each([
  { profile: "playground (state in memory)", redis: false },
  { profile: "Redis (every state port on redis-server)", redis: true }
])(
  "Paymagic's Patch Wallet SDK against walletgate, $profile (its protocol, through a client that acts as it does)",
  ({ profile, redis }) => {
    let f: Fixture
    let client: ReturnType<typeof patchClient>
    const tel = `tel:${TEST_PHONE}`

    beforeAll(async () => {
      f = await startKernelFixture({
        grants: ["tel"],
        apps: [OTHER_APP],
        kernel: { clientStatuses: "patch", resolver: { access: "open" } },
        ...(redis ? { redis: { url: redisServer.url, keyPrefix: `patch:${profile.length}:` } } : {})
      })
      client = patchClient(f)
    })
    afterAll(() => f?.stop())

    /** One call of nothing to a fresh address from the wallet of `tel`, as the SDK sends it. */
    const batch = (auth: string) => ({
      userId: tel,
      chain: "anvil",
      to: [freshAddress()],
      value: ["0"],
      data: ["0x"],
      delegatecall: 0,
      auth
    })

    it("sends a batch as the SDK does and gets its txHash through txStatus {userOpHash}; another app finds nothing by its hashes", async () => {
      const user = await f.phoneUser(TEST_PHONE)
      const sent = await client.sdkTx(batch(user.jwt))
      expect(sent.answer.status).toBe(200)
      expect("txHash" in sent ? sent.txHash : sent.error).toMatch(/^0x[0-9a-f]{64}$/)
      const txHash = "txHash" in sent ? sent.txHash : ""
      const receipt = await f.publicClient.getTransactionReceipt({ hash: txHash as Hex })
      expect(receipt.status).toBe("success")
      // The same transaction by each of its names, in any case.
      const { id, userOpHash } = sent.answer.body
      for (const body of [
        { userOpHash },
        { id },
        { txHash },
        { userOpHash: String(userOpHash).toUpperCase().replace("0X", "0x") }
      ]) {
        const found = await client.txStatus(body)
        expect(found).toMatchObject({ status: 200, body: { id, userOpHash, txHash } })
      }
      // Another app of the deployment, with its own valid token: nothing, as for a hash nobody sent.
      const other = patchClient(f, OTHER_CLIENT)
      for (const body of [{ userOpHash }, { id }, { txHash }, { userOpHash: `0x${"ab".repeat(32)}` }]) {
        expect(await other.txStatus(body)).toMatchObject({ status: 404, body: { code: "tx_not_found" } })
      }
      // Exactly one of the three names.
      expect(await client.txStatus({ userOpHash, txHash })).toMatchObject({
        status: 400,
        body: { code: "invalid_request" }
      })
      expect(await client.txStatus({})).toMatchObject({ status: 400, body: { code: "invalid_request" } })
      expect(await client.txStatus({ userOpHash, extra: 1 })).toMatchObject({
        status: 400,
        body: { code: "invalid_request" }
      })
    })

    it("resolves a phone number's wallet before sign-in, and a batch of the signed-in number runs from that wallet", async () => {
      const before = await client.resolve([tel])
      expect(before.status).toBe(200)
      const [resolved] = before.body.users as ReadonlyArray<{ accountAddress: Address }>
      const user = await f.phoneUser(TEST_PHONE)
      const sent = await client.tx(batch(user.jwt))
      expect(sent.status).toBe(200)
      expect(sent.body.account).toBe(resolved?.accountAddress)
      expect(sent.body.userOpHash).toMatch(/^0x[0-9a-f]{64}$/)
      const settled = await f.settled(sent.body.id, { authorization: `Bearer ${await f.accessToken()}` })
      expect(settled.status).toBe("confirmed")
      expect((await client.resolve([tel])).body.users).toEqual(before.body.users)
    })

    it("runs a test: user's batch with blank auth (a test-mode app on a test network)", async () => {
      const sent = await client.tx({
        userId: "test:elonmusk",
        chain: "anvil",
        to: [freshAddress()],
        value: ["0"],
        data: ["0x"],
        delegatecall: 0,
        auth: ""
      })
      expect(sent.status).toBe(200)
    })

    it("signs a hash, a string and typed data; each verifies with viem against the wallet, deployed or not", async () => {
      const user = await f.phoneUser(OTHER_PHONE)
      const other = `tel:${OTHER_PHONE}`
      const [{ accountAddress }] = (await client.resolve([other])).body.users as [{ accountAddress: Address }]
      const verifyAll = async () => {
        const hash = await client.sign({ userId: other, hash: hashMessage("any 32 bytes"), auth: user.jwt })
        const string = await client.sign({ userId: other, string: "Hello World!", auth: user.jwt })
        const typed = await client.sign({ userId: other, typedData: TYPED, auth: user.jwt })
        expect([hash.body.type, string.body.type, typed.body.type]).toEqual(["hash", "string", "typedData"])
        expect(string.body.hash).toBe(hashMessage("Hello World!"))
        expect(typed.body.hash).toBe(hashTypedData(typedForViem))
        const address = accountAddress
        expect(
          await f.publicClient.verifyHash({
            address,
            hash: hashMessage("any 32 bytes"),
            signature: hash.body.signature as Hex
          })
        ).toBe(true)
        expect(
          await f.publicClient.verifyMessage({
            address,
            message: "Hello World!",
            signature: string.body.signature as Hex
          })
        ).toBe(true)
        expect(
          await f.publicClient.verifyTypedData({ ...typedForViem, address, signature: typed.body.signature as Hex })
        ).toBe(true)
        // Another wallet's address does not verify it.
        expect(
          await f.publicClient.verifyMessage({
            address: freshAddress(),
            message: "Hello World!",
            signature: string.body.signature as Hex
          })
        ).toBe(false)
      }
      expect(await f.publicClient.getCode({ address: accountAddress })).toBeUndefined()
      await verifyAll()
      const deployed = await client.tx({
        userId: other,
        chain: "anvil",
        to: [freshAddress()],
        value: ["0"],
        data: ["0x"],
        auth: user.jwt
      })
      await f.settled(deployed.body.id, { authorization: `Bearer ${await f.accessToken()}` })
      expect(await f.publicClient.getCode({ address: accountAddress })).toMatch(/^0x[0-9a-f]+$/)
      await verifyAll()
    })

    it("refreshes a stale token once, and ends every permanent refusal within two token requests", async () => {
      client.staleToken()
      const before = client.tokenRequests()
      const user = await f.phoneUser(TEST_PHONE)
      const refreshed = await client.sign({ userId: tel, string: "hi", auth: user.jwt })
      expect(refreshed.status).toBe(200)
      expect(client.tokenRequests() - before).toBe(1)

      const refusals = [
        // A provider the app is not granted.
        { userId: "twitter:elonmusk", string: "hi", auth: user.jwt },
        // auth that proves another number.
        { userId: `tel:${OTHER_PHONE}`, string: "hi", auth: user.jwt }
      ]
      for (const body of refusals) {
        client.staleToken()
        const start = client.tokenRequests()
        const answer = await client.sign(body)
        expect(answer).toMatchObject({ status: 422, body: { code: "forbidden" } })
        expect(client.tokenRequests() - start).toBeLessThanOrEqual(2)
      }
    })

    it("never runs delegatecall: 1, as a CALL or otherwise", async () => {
      const user = await f.phoneUser(TEST_PHONE)
      const target = freshAddress()
      const answer = await client.tx({
        userId: tel,
        chain: "anvil",
        to: [target],
        value: ["1"],
        data: ["0x"],
        delegatecall: 1,
        auth: user.jwt
      })
      expect(answer).toMatchObject({ status: 400, body: { code: "delegatecall_unsupported" } })
      expect(await f.publicClient.getBalance({ address: target })).toBe(0n)
    })
  }
)

describe("a bundle's transaction hash, shared by operations of two apps (anvil + alto)", () => {
  // The gateway's log, which the test also writes: the other app's operation that the same bundle included.
  const log = Effect.runSync(Effect.service(TransactionLog).pipe(Effect.provide(TransactionLog.memory)))
  let f: Fixture
  beforeAll(async () => {
    f = await startKernelFixture({
      grants: ["tel"],
      apps: [OTHER_APP],
      kernel: { clientStatuses: "patch" },
      ports: () => Layer.succeed(TransactionLog, log)
    })
  })
  afterAll(() => f?.stop())

  it("answers each app its own operation by the bundle's hash, never the other's", async () => {
    const client = patchClient(f)
    const user = await f.phoneUser(TEST_PHONE)
    const sent = await client.sdkTx({
      userId: `tel:${TEST_PHONE}`,
      chain: "anvil",
      to: [freshAddress()],
      value: ["0"],
      data: ["0x"],
      delegatecall: 0,
      auth: user.jwt
    })
    const txHash = "txHash" in sent ? sent.txHash : sent.error
    const mine = await Effect.runPromise(log.find(String(sent.answer.body.id)))
    if (mine === undefined) throw new Error("the batch was not recorded")
    // The other app's operation in the same bundle, recorded before this one: first of the hash's records.
    const theirs = {
      ...mine,
      id: crypto.randomUUID(),
      owner: OTHER_CLIENT.clientId,
      userOpHash: `0x${"5a".repeat(32)}`,
      createdAt: mine.createdAt - 1
    }
    await Effect.runPromise(log.save(theirs))
    expect(await client.txStatus({ txHash })).toMatchObject({
      status: 200,
      body: { id: mine.id, userOpHash: mine.userOpHash, txHash }
    })
    // Before, the hash led to one record only: the other app's own operation was answered 404.
    expect(await patchClient(f, OTHER_CLIENT).txStatus({ txHash })).toMatchObject({
      status: 200,
      body: { id: theirs.id, userOpHash: theirs.userOpHash, txHash }
    })
  })
})
