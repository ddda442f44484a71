// A gateway sponsored by an ERC-7677 paymaster service: `walletgate paymaster serve` (the built CLI, a process of its
// own) for the devnet's VerifyingPaymaster, asked for stub data before the estimate and final data after the spend
// reservation. Its refusals, its absence and a hostile service's answers are each answered before anything is signed
// or sent (counted at the bundler's proxy).
import { execFile } from "node:child_process"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { promisify } from "node:util"
import { testUserIdentity } from "@walletgate/core/operations"
import { type Address, getAddress, parseEther } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort } from "../../src/devnet/anvil"
import { devnetNetworksFile, type PaymasterServe, startPaymasterServe, walletgateCli } from "../devnet/paymasterServe"
import { freshAddress, paymasterDeposit, type SharedDevnet, sharedDevnet } from "../devnet/shared"
import { CLIENT, startKernelFixture } from "../kernel/fixture"
import { oneTestKey, payingAllTo, startPayoutFixture } from "../payout/fixture"

type Fixture = Awaited<ReturnType<typeof startKernelFixture>>

let devnet: SharedDevnet
let serve: PaymasterServe

beforeAll(async () => {
  devnet = await sharedDevnet()
  // wgc_test may use 50 M gas per hour; "tiny" 1 gas (any operation is above it).
  serve = await startPaymasterServe(devnet, [`${CLIENT.clientId}=50000000`, "tiny=1"])
}, 60_000)
afterAll(async () => {
  await serve?.stop()
})

/** A kernel fixture sponsored by the service at `url` with `context`, its bundler behind a counting proxy. */
const sponsoredBy = (url: string, context: Record<string, unknown>) =>
  startKernelFixture({ bundlerProxy: true, paymasterService: { url, context, timeoutMs: 2_000 } })

/** Sends `value` wei from the test user `userId`'s wallet to `to` (blank auth: a test-mode app on a test network). */
const batch = async (f: Fixture, userId: string, to: Address, value: bigint) => {
  const bearer = { authorization: `Bearer ${await f.accessToken()}` }
  const answer = await f.call(
    "POST",
    "/v1/kernel/tx",
    { userId, chain: "anvil", to: [to], value: [String(value)], data: ["0x"], auth: "" },
    bearer
  )
  return { answer, bearer }
}

/** The bundler methods that would put an operation in flight: none of them may be called after a refusal. */
const sends = (f: Fixture) => f.bundlerProxy?.methods().filter((method) => method === "eth_sendUserOperation") ?? []

describe("sponsored by an ERC-7677 service (walletgate paymaster serve)", { tags: ["devnet"] }, () => {
  it("sponsors a wallet batch end to end: the wallet pays only the value, the paymaster's deposit pays the gas", async () => {
    const f = await sponsoredBy(serve.url, { app: CLIENT.clientId })
    try {
      const userId = "phone:pm-service-batch"
      const wallet = await f.walletOf(testUserIdentity(CLIENT.clientId, userId))
      await f.fund(wallet, 1_000n)
      const recipient = freshAddress()
      const depositBefore = await paymasterDeposit(devnet)
      const { answer, bearer } = await batch(f, userId, recipient, 400n)
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      expect((await f.settled(answer.body.id, bearer)).status).toBe("confirmed")
      expect(await devnet.publicClient.getBalance({ address: recipient })).toBe(400n)
      expect(await devnet.publicClient.getBalance({ address: wallet })).toBe(600n)
      expect(await paymasterDeposit(devnet)).toBeLessThan(depositBefore)
      expect(sends(f)).toHaveLength(1)
    } finally {
      await f.stop()
    }
  })

  it("sponsors a payout end to end", async () => {
    const keys = oneTestKey()
    const recipient = getAddress(freshAddress())
    const f = await startPayoutFixture({
      accounts: [payingAllTo("pm-service-payout", recipient)],
      apiKeys: keys.apiKeys,
      network: (config) => {
        if (config.erc4337 === undefined) return config
        const { paymaster: _signer, ...common } = config.erc4337
        return {
          ...config,
          erc4337: { ...common, paymasterService: { url: serve.url, context: { app: CLIENT.clientId } } }
        }
      }
    })
    try {
      const account = f.automationAccounts[0]?.address as Address
      await f.fund(account, parseEther("1"))
      const depositBefore = await paymasterDeposit(devnet)
      const paid = await f.call("POST", `/v1/anvil/account/${account}/payout/disperse`, {}, { "x-api-key": keys.key() })
      expect(paid.status, JSON.stringify(paid.body)).toBe(200)
      expect((await f.final(account, paid.body.id, keys.key())).body.status).toBe("confirmed")
      expect(await f.balance(recipient)).toBe(parseEther("1"))
      expect(await f.balance(account)).toBe(0n)
      expect(await paymasterDeposit(devnet)).toBeLessThan(depositBefore)
    } finally {
      await f.stop()
    }
  })

  it("the service refusing (an unknown app, or the app's gas spent): 502 upstream_refused, nothing sent", async () => {
    for (const app of ["stranger", "tiny"]) {
      const f = await sponsoredBy(serve.url, { app })
      try {
        const userId = `phone:pm-service-refused-${app}`
        const wallet = await f.walletOf(testUserIdentity(CLIENT.clientId, userId))
        await f.fund(wallet, 1_000n)
        const { answer } = await batch(f, userId, freshAddress(), 1n)
        expect([answer.status, answer.body.code], app).toEqual([502, "upstream_refused"])
        expect(String(answer.body.detail)).toContain("paymaster service refused")
        expect(answer.body.reason).toMatch(app === "tiny" ? /gas of this window is spent/ : /unknown app/)
        expect(sends(f)).toEqual([])
        // The unknown app is refused at the stub: not even estimated.
        if (app === "stranger") expect(f.bundlerProxy?.methods()).not.toContain("eth_estimateUserOperationGas")
        expect(await devnet.publicClient.getBalance({ address: wallet })).toBe(1_000n)
      } finally {
        await f.stop()
      }
    }
  })

  it("a refusal of the final data gives back the gas the spend policy reserved for it", async () => {
    // 3 M gas per app: a deploying operation reserves several hundred thousand, so ten kept reservations would exhaust it.
    const f = await startKernelFixture({
      bundlerProxy: true,
      paymasterService: { url: serve.url, context: { app: "tiny" } },
      spend: { perApp: 3_000_000 }
    })
    try {
      for (let attempt = 0; attempt < 10; attempt++) {
        const { answer } = await batch(f, "phone:pm-service-release", freshAddress(), 0n)
        expect([answer.status, answer.body.code], `attempt ${attempt}`).toEqual([502, "upstream_refused"])
      }
      expect(sends(f)).toEqual([])
    } finally {
      await f.stop()
    }
  })

  it("the service down: 503 paymaster_unavailable with Retry-After, nothing sent", async () => {
    const f = await sponsoredBy(`http://127.0.0.1:${await freePort()}`, { app: CLIENT.clientId })
    try {
      const { answer } = await batch(f, "phone:pm-service-down", freshAddress(), 0n)
      expect([answer.status, answer.body.code]).toEqual([503, "paymaster_unavailable"])
      expect(answer.headers.get("retry-after")).toBe("5")
      expect(f.bundlerProxy?.methods()).toEqual([])
    } finally {
      await f.stop()
    }
  })
})

describe("a hostile paymaster service", { tags: ["devnet"] }, () => {
  let hostile: Server
  let url = ""
  /** What the hostile service answers to each method (its JSON-RPC `result`, or a raw body). */
  let answers: Record<string, (params: ReadonlyArray<unknown>) => unknown> = {}
  let f: Fixture
  beforeAll(async () => {
    hostile = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        const request = JSON.parse(Buffer.concat(chunks).toString()) as { id: unknown; method: string; params: [] }
        const result = answers[request.method]?.(request.params)
        res.writeHead(200, { "content-type": "application/json" })
        res.end(typeof result === "string" ? result : JSON.stringify({ jsonrpc: "2.0", id: request.id, result }))
      })
    })
    await new Promise<void>((resolve) => hostile.listen(0, "127.0.0.1", resolve))
    url = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`
    f = await sponsoredBy(url, { app: CLIENT.clientId })
  })
  afterAll(async () => {
    await f?.stop()
    hostile?.closeAllConnections()
    await new Promise((resolve) => hostile?.close(resolve))
  })

  /** A well-formed stub naming the devnet's paymaster (what the real service answers), changed by `change`. */
  const stub = (change: Record<string, unknown> = {}) => ({
    paymaster: devnet.deployment.contracts.verifyingPaymaster,
    paymasterData: `0x${"00".repeat(129)}`,
    paymasterVerificationGasLimit: "0x186a0",
    paymasterPostOpGasLimit: "0x0",
    ...change
  })

  it("refuses before signing: a 1 MB paymasterData, a non-hex value, gas limits of 2^200, a missing post-op limit", async () => {
    const cases: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
      ["1 MB paymasterData", { paymasterData: `0x${"ab".repeat(1_000_000)}` }],
      ["4 KB paymasterData", { paymasterData: `0x${"ab".repeat(4_096)}` }],
      ["non-hex paymasterData", { paymasterData: "0xzz" }],
      ["non-hex paymaster", { paymaster: "walletgate" }],
      ["2^200 validation gas", { paymasterVerificationGasLimit: `0x${(2n ** 200n).toString(16)}` }],
      ["2^200 post-op gas", { paymasterPostOpGasLimit: `0x${(2n ** 200n).toString(16)}` }],
      ["post-op gas as a number", { paymasterPostOpGasLimit: 0 }],
      ["no post-op gas", { paymasterPostOpGasLimit: undefined }]
    ]
    for (const [name, change] of cases) {
      answers = { pm_getPaymasterStubData: () => stub(change) }
      f.bundlerProxy?.reset()
      const { answer } = await batch(f, "phone:pm-hostile-stub", freshAddress(), 0n)
      expect([answer.status, answer.body.code], name).toEqual([503, "paymaster_unavailable"])
      expect(f.bundlerProxy?.methods(), name).toEqual([])
    }
  })

  it("refuses the final data naming another paymaster, raising a gas limit, or not JSON-RPC: nothing sent", async () => {
    const cases: ReadonlyArray<readonly [string, unknown]> = [
      ["another paymaster", { paymaster: freshAddress(), paymasterData: "0x" }],
      ["more validation gas", { ...stub(), paymasterVerificationGasLimit: "0x186a1" }],
      ["more post-op gas", { ...stub(), paymasterPostOpGasLimit: "0x1" }],
      ["not JSON", "<html>pay me</html>"],
      ["no result", JSON.stringify({ jsonrpc: "2.0", id: 1 })]
    ]
    for (const [name, final] of cases) {
      answers = { pm_getPaymasterStubData: () => stub(), pm_getPaymasterData: () => final }
      f.bundlerProxy?.reset()
      const { answer } = await batch(f, "phone:pm-hostile-final", freshAddress(), 0n)
      expect([answer.status, answer.body.code], name).toEqual([503, "paymaster_unavailable"])
      expect(sends(f), name).toEqual([])
    }
  })

  it("a JSON-RPC error is the service's refusal (502) unless it says the service failed in itself (503)", async () => {
    for (const [code, status, problem] of [
      [-32000, 502, "upstream_refused"],
      [-32602, 502, "upstream_refused"],
      [-32603, 503, "paymaster_unavailable"],
      [-32601, 503, "paymaster_unavailable"]
    ] as const) {
      answers = {
        pm_getPaymasterStubData: () =>
          JSON.stringify({ jsonrpc: "2.0", id: 1, error: { code, message: "policy says no\u0000\u001b[31m" } })
      }
      const { answer } = await batch(f, "phone:pm-hostile-error", freshAddress(), 0n)
      expect([answer.status, answer.body.code], String(code)).toEqual([status, problem])
      if (status === 502) expect(answer.body.reason).toBe("policy says no??[31m")
    }
  })
})

describe("walletgate doctor on a network sponsored by a paymaster service", { tags: ["devnet"] }, () => {
  const doctor = async (paymaster: Record<string, unknown>) => {
    const networks = devnetNetworksFile(devnet, paymaster)
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [walletgateCli, "doctor", "--network", "anvil"], {
        env: { PATH: process.env.PATH ?? "", WALLETGATE_NETWORKS_FILE: networks.file }
      }).catch((error: { stdout: string }) => ({ stdout: error.stdout }))
      return stdout
    } finally {
      networks.remove()
    }
  }

  it("reports the service: ok when it answers a dry stub with a deployed paymaster, failing when it refuses or is down", async () => {
    expect(await doctor({ url: serve.url, context: { app: CLIENT.clientId } })).toMatch(
      new RegExp(
        `ok\\s+paymaster service\\s+answers pm_getPaymasterStubData: paymaster ${devnet.deployment.contracts.verifyingPaymaster}`
      )
    )
    expect(await doctor({ url: serve.url, context: { app: "stranger" } })).toMatch(
      /fail\s+paymaster service\s+refused a dry operation \(error -32001: unknown app/
    )
    expect(await doctor({ url: `http://127.0.0.1:${await freePort()}` })).toMatch(
      /fail\s+paymaster service\s+did not answer pm_getPaymasterStubData properly \(pm_getPaymasterStubData: unreachable\)/
    )
  })
})
