// Latency of single endpoints on the embedded defaults (in memory) and with the ports @walletgate/redis provides
// on Redis (a redis-server of its own): OTP send + verify, a kernel transaction (through the devnet's alto bundler) and a payout on a local anvil.
// Requests go one at a time straight to `gateway.fetch` (no socket: bench/http/throughput.ts measures the HTTP
// layers), after a short warm-up. Then the RPC round trips of the chain endpoints before they answer, counted
// by a proxy in front of anvil in a separate pass (the proxy's own delay never enters the latencies).
// The sweeper's lookup (GET /api/:address with 100 tokens, and its round trips) is bench/sweeper.ts's.
import { createServer, type Server } from "node:http"
import {
  ApiKeyStore,
  type App,
  AutomationAccounts,
  ClientStore,
  embeddedPorts,
  type Gateway,
  type GatewayPorts,
  makeGateway,
  SecureRandom,
  SmsSender
} from "@walletgate/core"
import { hashClientSecret } from "@walletgate/core/auth"
import { accountSalt, automationIdentity, deriveOwnerKey } from "@walletgate/core/chain"
import { anvilDevKey, type Devnet, predictAccountAddress, startDevnet } from "@walletgate/core/devnet"
import { type AutomationAccount, makeApiKey } from "@walletgate/core/payout"
import { RedisStores } from "@walletgate/redis"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { parseEther, toHex, zeroAddress } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { type RedisServer, startRedisServer } from "../../packages/store-redis/test/redis-server.ts"
import { TEST_CODE, testPhone } from "./requests.ts"
import { median, percentile } from "./statistics.ts"

/** How much is measured. */
export interface EndpointSettings {
  /** Measured requests per endpoint and store, one at a time. */
  readonly count: number
  /** Unmeasured requests before them. */
  readonly warmUp: number
  /** Users (kernel) and automation accounts (payout) taken in turn: see {@link measureEndpoints}. */
  readonly accounts: number
  /** Requests whose RPC round trips are counted. */
  readonly counted: number
}

/** One endpoint on one store. */
export interface EndpointRow {
  readonly endpoint: string
  readonly store: "memory" | "redis"
  readonly count: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly meanMs: number
}

/** The RPC round trips one request makes before it answers. */
export interface RpcCount {
  readonly endpoint: string
  /** The median over the counted requests. */
  readonly roundTrips: number
  /** The JSON-RPC methods of one such request, in order. */
  readonly methods: ReadonlyArray<string>
}

/** Everything {@link measureEndpoints} found. */
export interface EndpointResults {
  readonly rows: ReadonlyArray<EndpointRow>
  readonly rpc: ReadonlyArray<RpcCount>
  /** What was not measured, and why. */
  readonly notMeasured: ReadonlyArray<{ readonly endpoint: string; readonly store: string; readonly reason: string }>
  /** The ports the "redis" rows have on Redis (the rest in memory). */
  readonly onRedis: ReadonlyArray<string>
  /** The ports `RedisStores.layer` provides that the "redis" rows replace with the registrations in memory. */
  readonly registeredInMemory: ReadonlyArray<string>
}

// A development secret, public by being in this file: wallets made with it exist only on the local chain.
const MASTER_SECRET = "walletgate-bench-http-master-secret-0123456789"
const CLIENT = { clientId: "wgc_bench", clientSecret: "wgs_bench_secret" }
// Test phones by purpose, 10 000 apart: the sign-ins measured in memory and on Redis, the kernel's users of
// each store and of the round-trip count.
const PHONES = { memory: 0, redis: 10_000, users: 20_000, redisUsers: 30_000, rpcUsers: 40_000 } as const
const KERNEL_TX = "POST /v1/kernel/tx (anvil)"
const PAYOUT = "POST payout/disperse (anvil)"

const summary = (endpoint: string, store: EndpointRow["store"], latencies: ReadonlyArray<number>): EndpointRow => {
  const sorted = [...latencies].sort((a, b) => a - b)
  return {
    endpoint,
    store,
    count: sorted.length,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    meanMs: sorted.reduce((sum, value) => sum + value, 0) / sorted.length
  }
}

/** A gateway's answers as the benchmark reads them; any other status than `expected` stops the benchmark. */
const caller =
  (gateway: Gateway) =>
  async (
    expected: number,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {}
  ): Promise<Record<string, unknown>> => {
    const response = await gateway.fetch(
      new Request(`http://127.0.0.1${path}`, {
        method,
        headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    )
    const text = await response.text()
    if (response.status !== expected)
      throw new Error(`${method} ${path}: expected ${expected}, got ${response.status} ${text}`)
    return JSON.parse(text) as Record<string, unknown>
  }
type Call = ReturnType<typeof caller>

/** Times `count` calls of `operation` after `warmUp` unmeasured ones; call `n` gets `n` (warm-up first). */
const timed = async (
  warmUp: number,
  count: number,
  operation: (n: number) => Promise<unknown>
): Promise<ReadonlyArray<number>> => {
  for (let n = 0; n < warmUp; n++) await operation(n)
  const latencies: Array<number> = []
  for (let n = warmUp; n < warmUp + count; n++) {
    const started = performance.now()
    await operation(n)
    latencies.push(performance.now() - started)
  }
  return latencies
}

/** Signs in test phone `n`; resolves to its user's id (`phone:…`) and JWT. */
const signIn = async (call: Call, n: number) => {
  await call(200, "POST", "/functions/v1/signInWithOTP", { phone: testPhone(n) })
  const verified = await call(200, "POST", "/functions/v1/verifyOTP", { phone: testPhone(n), token: TEST_CODE })
  const user = verified.user as { readonly id: string }
  return { userId: `phone:${user.id}`, jwt: String(verified.access_token) }
}

/** A JSON-RPC proxy in front of anvil that counts the HTTP round trips and the methods they carry. */
const countingProxy = async (target: string) => {
  const methods: Array<string> = []
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString()
      const parsed = JSON.parse(body) as { method?: string } | ReadonlyArray<{ method?: string }>
      methods.push(
        Array.isArray(parsed)
          ? `batch(${parsed.map((each) => each.method).join(",")})`
          : String((parsed as { method?: string }).method)
      )
      fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body })
        .then(async (answer) => {
          res.writeHead(answer.status, { "content-type": "application/json" })
          res.end(await answer.text())
        })
        .catch(() => res.destroy())
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}`,
    methods,
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

/** Calls one of anvil's own RPC methods. */
const anvilCall = async (local: Devnet, method: string, params: ReadonlyArray<unknown>) => {
  const answer = await fetch(local.anvil.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params })
  })
  if (!answer.ok) throw new Error(`${method} answered ${answer.status}`)
}

/** What every gateway here shares: the app, funded automation accounts and their API key. */
const chainSetUp = async (local: Devnet, accounts: number) => {
  const automationAccounts: Array<AutomationAccount> = []
  for (let i = 0; i < accounts; i++) {
    const accountKey = `bench-${i}`
    const identity = automationIdentity(accountKey)
    const owner = privateKeyToAccount(deriveOwnerKey(MASTER_SECRET, identity)).address
    const address = await predictAccountAddress(
      local.publicClient,
      local.contracts.walletFactory,
      owner,
      accountSalt(identity)
    )
    await anvilCall(local, "anvil_setBalance", [address, toHex(parseEther("1"))])
    automationAccounts.push({ address, network: local.network.slug, accountKey })
  }
  const apiKey = Effect.runSync(
    makeApiKey({
      mode: "test",
      networks: [local.network.slug],
      accounts: automationAccounts.map((account) => account.address)
    }).pipe(Effect.provide(SecureRandom.crypto))
  )
  const phones: Record<string, string> = {}
  for (const start of Object.values(PHONES)) {
    for (let n = start; n < start + 10_000; n++) phones[testPhone(n)] = TEST_CODE
  }
  const apps: ReadonlyArray<App> = [
    {
      clientId: CLIENT.clientId,
      secretHash: hashClientSecret(CLIENT.clientSecret),
      providers: ["phone"],
      testMode: true
    }
  ]
  /** The ports of a gateway on `rpcUrl` (anvil itself, or the counting proxy). */
  const ports = (rpcUrl: string): Layer.Layer<GatewayPorts> =>
    Layer.mergeAll(
      embeddedPorts({
        masterSecret: MASTER_SECRET,
        otp: { testPhones: phones, sendsPerIpPerHour: Number.MAX_SAFE_INTEGER },
        networks: [{ ...local.network, rpcUrl }],
        apps,
        apiKeys: [apiKey.record],
        automationAccounts
      }),
      SmsSender.console(() => undefined)
    )
  /** The registrations (app, API key, automation accounts) in memory, over whatever a Redis layer provides. */
  const registrations = Layer.mergeAll(
    ClientStore.memory(apps),
    ApiKeyStore.memory([apiKey.record]),
    AutomationAccounts.memory(automationAccounts)
  )
  return {
    addresses: automationAccounts.map((account) => account.address),
    apiKey: apiKey.key,
    ports,
    registrations
  }
}

/** Kernel transactions and payouts through `call`, each request to the next user or account in turn. */
const moneyMovers = async (
  call: Call,
  users: number,
  addresses: ReadonlyArray<string>,
  apiKey: string,
  phone0: number
) => {
  const granted = await call(200, "POST", "/v1/auth", {
    client_id: CLIENT.clientId,
    client_secret: CLIENT.clientSecret
  })
  const bearer = { authorization: `Bearer ${String(granted.access_token)}` }
  const signedIn: Array<{ readonly userId: string; readonly jwt: string }> = []
  for (let i = 0; i < users; i++) signedIn.push(await signIn(call, phone0 + i))
  const recipient = privateKeyToAccount(anvilDevKey(5)).address
  return {
    // A call of no value from the user's wallet (the relayer pays the gas): the first one deploys the wallet.
    kernelTx: async (n: number) => {
      const user = signedIn[n % signedIn.length] ?? { userId: "", jwt: "" }
      await call(
        200,
        "POST",
        "/v1/kernel/tx",
        { userId: user.userId, chain: "anvil", to: [recipient], value: ["0"], data: ["0x"], auth: user.jwt },
        bearer
      )
    },
    // 1 wei from the account to one recipient: the first one deploys the account.
    payout: async (n: number) => {
      const address = addresses[n % addresses.length] ?? zeroAddress
      await call(
        200,
        "POST",
        `/v1/anvil/account/${address}/payout/disperse`,
        { assets: [zeroAddress], amounts: ["1"], recipients: [recipient] },
        { "x-api-key": apiKey }
      )
    }
  }
}

// An account stays locked until its transaction is mined (anvil mines at once; the relay polls every 20 ms),
// so a request to the same user or account right after the last one would measure that wait. So requests take
// `accounts` users or accounts in turn (the first round, unmeasured, deploys them), and `settle` lets the last
// receipts be seen before anything is measured or counted.
const settle = () => new Promise((resolve) => setTimeout(resolve, 200))

/** The names of the ports a layer provides (`TransactionLog`, …), found by building it once. */
const portsProvidedBy = async <A>(layer: Layer.Layer<A>): Promise<ReadonlyArray<string>> => {
  const context = await Effect.runPromise(Effect.scoped(Layer.build(layer)))
  return [...context.mapUnsafe.keys()]
    .filter((key) => key.startsWith("@walletgate/"))
    .map((key) => key.split("/").at(-1) ?? key)
}

/** Measures the endpoints; starts and stops its own anvil and redis-server. */
export const measureEndpoints = async (
  settings: EndpointSettings,
  progress: (line: string) => void
): Promise<EndpointResults> => {
  const rows: Array<EndpointRow> = []
  const rpc: Array<RpcCount> = []
  const notMeasured: Array<{ endpoint: string; store: string; reason: string }> = []
  let redisPorts: ReadonlyArray<string> = []
  let registeredInMemory: ReadonlyArray<string> = []
  const notOnRedis = (port: string) =>
    `@walletgate/redis provides ${redisPorts.join(", ")}; ${port}, which this endpoint needs, is not among them`
  const local = await startDevnet()
  let redis: RedisServer | undefined
  const gateways: Array<Gateway> = []
  const started = (gateway: Gateway) => {
    gateways.push(gateway)
    return gateway
  }
  try {
    redis = await startRedisServer().catch((error: unknown) => {
      notMeasured.push({ endpoint: "every endpoint", store: "redis", reason: String(error) })
      return undefined
    })
    const setUp = await chainSetUp(local, settings.accounts)
    const stores: Array<{ store: EndpointRow["store"]; gateway: Gateway; phones: number; users: number }> = [
      {
        store: "memory",
        gateway: started(makeGateway({ ports: setUp.ports(local.anvil.rpcUrl), loggers: [] })),
        phones: PHONES.memory,
        users: PHONES.users
      }
    ]
    if (redis !== undefined) {
      redisPorts = await portsProvidedBy(RedisStores.layer({ url: redis.url, keyPrefix: "bench-http-probe:" }))
      const registrations = await portsProvidedBy(setUp.registrations)
      registeredInMemory = redisPorts.filter((port) => registrations.includes(port))
      // Every port @walletgate/redis provides is on Redis; the registrations stay as configured, in memory.
      const ports = Layer.mergeAll(
        setUp.ports(local.anvil.rpcUrl),
        RedisStores.layer({ url: redis.url, keyPrefix: "bench-http:" }),
        setUp.registrations
      )
      stores.push({
        store: "redis",
        gateway: started(makeGateway({ ports, loggers: [] })),
        phones: PHONES.redis,
        users: PHONES.redisUsers
      })
    }

    for (const { store, gateway, phones } of stores) {
      progress(`OTP send + verify, ${store}`)
      const call = caller(gateway)
      const send: Array<number> = []
      const verify: Array<number> = []
      const both = await timed(settings.warmUp, settings.count, async (n) => {
        const phone = testPhone(phones + n)
        const began = performance.now()
        await call(200, "POST", "/functions/v1/signInWithOTP", { phone })
        const sent = performance.now()
        await call(200, "POST", "/functions/v1/verifyOTP", { phone, token: TEST_CODE })
        if (n >= settings.warmUp) {
          send.push(sent - began)
          verify.push(performance.now() - sent)
        }
      })
      rows.push(
        summary("POST signInWithOTP", store, send),
        summary("POST verifyOTP", store, verify),
        summary("OTP send + verify", store, both)
      )
    }

    // One store at a time: the gateways share the relayer's key, whose nonces each allocates in process.
    for (const { store, gateway, users } of stores) {
      if (store === "redis" && !redisPorts.includes("TransactionLog")) {
        const reason = notOnRedis("TransactionLog")
        notMeasured.push({ endpoint: KERNEL_TX, store, reason }, { endpoint: PAYOUT, store, reason })
        continue
      }
      const movers = await moneyMovers(caller(gateway), settings.accounts, setUp.addresses, setUp.apiKey, users)
      progress(`kernel tx, ${store}`)
      await timed(settings.accounts, 0, movers.kernelTx)
      await settle()
      rows.push(summary(KERNEL_TX, store, await timed(0, settings.count, movers.kernelTx)))
      progress(`payout, ${store}`)
      await timed(settings.accounts, 0, movers.payout)
      await settle()
      rows.push(summary(PAYOUT, store, await timed(0, settings.count, movers.payout)))
      await settle()
    }

    // The RPC round trips, on a gateway of their own whose network points at the counting proxy. The other
    // gateways go first, for the relayer's nonces.
    for (const gateway of gateways.splice(0)) await gateway.dispose()
    progress("RPC round trips")
    const proxy = await countingProxy(local.anvil.rpcUrl)
    try {
      const counted = started(makeGateway({ ports: setUp.ports(proxy.url), loggers: [] }))
      const countedMovers = await moneyMovers(
        caller(counted),
        1,
        setUp.addresses.slice(0, 1),
        setUp.apiKey,
        PHONES.rpcUsers
      )
      for (const [endpoint, operation] of [
        [KERNEL_TX, countedMovers.kernelTx],
        [PAYOUT, countedMovers.payout]
      ] as const) {
        // One unmeasured request first (it deploys the wallet and fills the address cache); then each counted
        // one alone, after the last one's receipt was seen, so that no background call falls in its count.
        const perRequest: Array<ReadonlyArray<string>> = []
        for (let n = 0; n <= settings.counted; n++) {
          await settle()
          const before = proxy.methods.length
          await operation(n)
          if (n > 0) perRequest.push(proxy.methods.slice(before))
        }
        rpc.push({
          endpoint,
          roundTrips: median(perRequest.map((methods) => methods.length)),
          methods: perRequest.at(-1) ?? []
        })
      }
    } finally {
      for (const gateway of gateways.splice(0)) await gateway.dispose()
      await proxy.close()
    }
  } finally {
    for (const gateway of gateways) await gateway.dispose()
    await redis?.stop()
    await local.stop()
  }
  return {
    rows,
    rpc,
    notMeasured,
    onRedis: redisPorts.filter((port) => !registeredInMemory.includes(port)),
    registeredInMemory
  }
}
