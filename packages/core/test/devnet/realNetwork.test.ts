// A second chain, as an operator meets a real network: a bare node with another chain id (84532, Base Sepolia's, which
// has a presigned Safe singleton factory deployment), a bundler beside it, a networks file, and the built CLI run as a
// child process: `walletgate doctor` fails, `walletgate contracts deploy` makes the network ready, doctor passes. Then
// the walk-through runs through a gateway configured by that same file, beside the worker's devnet: a user's Safe has
// one address on both chains.
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { embeddedPorts, makeGateway } from "@walletgate/core"
import { hashClientSecret } from "@walletgate/core/auth"
import { gatewayNetworksFromEnv } from "@walletgate/core/config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import { type Address, createPublicClient, createTestClient, http, parseAbiItem, parseEther, parseGwei } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { canonicalSafe4337 } from "../../src/deploy/contractPackages"
import { type AltoInstance, startAlto } from "../../src/devnet/alto"
import { type AnvilInstance, freePort, startAnvil } from "../../src/devnet/anvil"
import { anvilDevKey } from "../../src/devnet/local"
import { jsonCaller } from "../gatewayCall"
import { freshAddress, freshMasterSecret, sharedDevnet } from "./shared"

const cli = fileURLToPath(new URL("../../dist/cli.js", import.meta.url))
const folder = mkdtempSync(join(tmpdir(), "walletgate-real-network-"))
const file = join(folder, "networks.json")
const CHAIN_ID = 84532
const DEPLOYER_KEY = anvilDevKey(3)
const SIGNER_KEY = anvilDevKey(4)

let anvil: AnvilInstance
let alto: AltoInstance | undefined
let dead: string
/** The bundler's URL: nothing answers there until alto starts (it needs the EntryPoint deployed first). */
let bundlerUrl: string
/** The operator's paymaster, once `contracts deploy` has made it. */
let paymasterAddress: string | undefined

/** Writes the networks file: Base Sepolia's chain id on the local node (behind a dead first endpoint). */
const writeNetworks = (paymaster: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  writeFileSync(
    file,
    JSON.stringify({
      networks: {
        "base-sepolia": {
          chainId: CHAIN_ID,
          testnet: true,
          rpcUrls: [dead, anvil.rpcUrl],
          bundlerUrl,
          paymaster: { signerKey: { env: "BASE_SEPOLIA_PAYMASTER_KEY" }, minDeposit: "1 ether", ...paymaster },
          feeCaps: { maxFeePerGas: "100 gwei" },
          rpcTimeoutMs: 2_000
        },
        // The same node under a chain id it does not have: a misconfiguration doctor and deploy must catch.
        wrong: { chainId: 8453, rpcUrls: [anvil.rpcUrl], bundlerUrl },
        ...extra
      }
    })
  )

/** Runs the built CLI with the networks file and the keys in its environment. */
const walletgate = async (...args: Array<string>) => {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [cli, ...args], {
      encoding: "utf8",
      env: {
        PATH: process.env.PATH ?? "",
        WALLETGATE_NETWORKS_FILE: file,
        WALLETGATE_DEPLOYER_KEY: DEPLOYER_KEY,
        BASE_SEPOLIA_PAYMASTER_KEY: SIGNER_KEY
      }
    })
    return { status: 0, output: stdout }
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string }
    return { status: failed.code, output: `${failed.stdout}${failed.stderr}` }
  }
}

describe("a second chain made ready by the CLI", { tags: ["devnet"] }, () => {
  beforeAll(async () => {
    anvil = await startAnvil({ chainId: CHAIN_ID })
    dead = `http://127.0.0.1:${await freePort()}`
    bundlerUrl = dead
    writeNetworks({})
  }, 120_000)
  afterAll(async () => {
    await alto?.stop()
    await anvil?.stop()
    rmSync(folder, { recursive: true, force: true })
  })

  it("doctor before deploy: exit 1, naming each missing contract", async () => {
    const { status, output } = await walletgate("doctor", "--network", "basesep")
    expect(status).toBe(1)
    expect(output).toContain("ok    chain id")
    expect(output).toMatch(/fail\s+EntryPoint\s+no code at 0x0000000071727De22E5E9d8BAf0edAc6f37da032/)
    expect(output).toMatch(/fail\s+Safe4337Module\s+no code at/)
    expect(output).toMatch(/fail\s+paymaster\s+no address/)
    expect(output).toMatch(/fail\s+bundler\s+/)
  })

  it("deploy refuses a node whose chain id is not the configured one, and sends nothing", async () => {
    const reader = createPublicClient({ transport: http(anvil.rpcUrl) })
    const deployer = privateKeyToAccount(DEPLOYER_KEY).address
    const nonce = await reader.getTransactionCount({ address: deployer })
    const { status, output } = await walletgate("contracts", "deploy", "--network", "wrong")
    expect(status).toBe(1)
    expect(output).toContain("reports chain id 84532, the configuration says 8453: nothing sent")
    expect(await reader.getTransactionCount({ address: deployer })).toBe(nonce)
    const doctor = await walletgate("doctor", "--network", "8453")
    expect(doctor.status).toBe(1)
    expect(doctor.output).toMatch(/fail\s+chain id\s+the node reports 84532, the configuration says 8453/)
  })

  it("deploy makes every contract and a funded paymaster; a second run deploys nothing; doctor then passes", {
    timeout: 120_000
  }, async () => {
    // The presigned Safe singleton factory deployment of 84532 offers 0.001 gwei, Base Sepolia's fees; anvil starts
    // at 1 gwei: a base fee of 0 lets it in, as it gets in on the real chain.
    await createTestClient({ mode: "anvil", transport: http(anvil.rpcUrl) }).setNextBlockBaseFeePerGas({
      baseFeePerGas: 0n
    })
    const first = await walletgate(
      "contracts",
      "deploy",
      "--network",
      "base-sepolia",
      "--new-paymaster",
      "--stake",
      "0.1 ether"
    )
    expect(first.status, first.output).toBe(0)
    for (const contract of [
      "SafeSingletonFactory",
      "EntryPoint",
      "Safe",
      "SafeProxyFactory",
      "Safe4337Module",
      "SafeModuleSetup",
      "VerifyingPaymaster"
    ]) {
      expect(first.output).toMatch(new RegExp(`deployed\\s+${contract}\\s`))
    }
    expect(first.output).toMatch(/funded\s+VerifyingPaymaster\s.*1 ETH/)
    expect(first.output).toMatch(/staked\s+VerifyingPaymaster\s.*0\.1 ETH/)
    const paymaster = /"address": "(0x[0-9a-fA-F]{40})"/.exec(first.output)?.[1]
    paymasterAddress = paymaster
    expect(paymaster).toMatch(/^0x[0-9a-fA-F]{40}$/)
    alto = await startAlto({
      rpcUrl: anvil.rpcUrl,
      entryPoints: [canonicalSafe4337().entryPoint.address],
      executorKeys: [anvilDevKey(5), anvilDevKey(6)],
      utilityKey: anvilDevKey(8),
      blockTimeMs: 100
    })
    bundlerUrl = alto.bundlerUrl
    writeNetworks({ address: paymaster })

    // Idempotent: the second run sends nothing.
    const second = await walletgate("contracts", "deploy", "--network", String(CHAIN_ID))
    expect(second.status, second.output).toBe(0)
    expect(second.output).toContain("nothing deployed: every contract is already in place")
    expect(second.output).not.toMatch(/^(deployed|funded|staked) /m)

    const doctor = await walletgate("doctor", "--network", "base-sepolia", "--json")
    expect(doctor.status, doctor.output).toBe(0)
    const report = JSON.parse(doctor.output) as {
      ok: boolean
      checks: ReadonlyArray<{ check: string; status: string; detail: string }>
    }
    expect(report.ok).toBe(true)
    expect(report.checks.filter((check) => check.status === "fail")).toEqual([])
    expect(report.checks.map((check) => check.check)).toEqual(
      expect.arrayContaining([
        "chain id",
        "EntryPoint",
        "Safe",
        "Safe4337Module",
        "paymaster",
        "paymaster deposit",
        "bundler",
        "fee caps",
        "spend budgets"
      ])
    )
    const deposit = await createPublicClient({ transport: http(anvil.rpcUrl) }).readContract({
      address: canonicalSafe4337().entryPoint.address,
      abi: [parseAbiItem("function balanceOf(address) view returns (uint256)")],
      functionName: "balanceOf",
      args: [paymaster as `0x${string}`]
    })
    expect(deposit).toBe(parseEther("1"))
  })

  it("doctor fails a paymaster that signs with another key than the configured one, and a deposit below its minimum", async () => {
    const deployed = JSON.parse((await walletgate("doctor", "--network", "base-sepolia", "--json")).output) as {
      checks: ReadonlyArray<{ check: string; detail: string }>
    }
    const address = /^(0x[0-9a-fA-F]{40})/.exec(
      deployed.checks.find((check) => check.check === "paymaster")?.detail ?? ""
    )?.[1]
    writeNetworks({ address, signerKey: anvilDevKey(7), minDeposit: "2 ether" })
    const { status, output } = await walletgate("doctor", "--network", "base-sepolia")
    expect(status).toBe(1)
    expect(output).toMatch(/fail\s+paymaster\s+the code at 0x[0-9a-fA-F]{40} is not a VerifyingPaymaster/)
    expect(output).toMatch(/fail\s+paymaster deposit\s+1 ETH at the EntryPoint \(minimum 2\)/)
    expect(output).not.toContain(anvilDevKey(7).slice(2))
    writeNetworks({ address })
  })

  it("the walk-through through a gateway configured by the file: the user's Safe has the same address on both chains, and a fee above the cap is refused with nothing sent", {
    timeout: 120_000
  }, async () => {
    // The gateway reads the networks file as a deployment does (the paymaster's key from the variable it names),
    // and serves the worker's devnet (chain 31337) beside it.
    const env = { WALLETGATE_NETWORKS_FILE: file, BASE_SEPOLIA_PAYMASTER_KEY: SIGNER_KEY }
    writeNetworks({ address: paymasterAddress })
    const configured = await Effect.runPromise(
      Effect.provideService(gatewayNetworksFromEnv, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))
    )
    const second = configured.find((network) => network.slug === "base-sepolia")
    expect(second?.erc4337?.bundlerUrl).toBe(bundlerUrl)
    expect(second?.erc4337?.feeCaps?.maxFeePerGas).toBe(parseGwei("100"))
    const first = await sharedDevnet()
    const app = { clientId: "wgc_second_chain", clientSecret: "wgs_second_chain_secret" }
    const phone = "+15005550006"
    const gateway = makeGateway({
      ports: embeddedPorts({
        masterSecret: freshMasterSecret(),
        otp: { testPhones: { [phone]: "123456" } },
        networks: [first.network, ...configured.filter((network) => network.slug === "base-sepolia")],
        apps: [
          {
            clientId: app.clientId,
            secretHash: hashClientSecret(app.clientSecret),
            providers: ["phone"],
            testMode: true
          }
        ]
      }),
      loggers: []
    })
    const post = jsonCaller(gateway)
    const call = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      post("POST", path, body, headers)
    try {
      await call("/functions/v1/signInWithOTP", { phone })
      const verified = await call("/functions/v1/verifyOTP", { phone, token: "123456" })
      expect(verified.status).toBe(200)
      const userId = `phone:${(verified.body.user as { id: string }).id}`
      const granted = await call("/v1/auth", { client_id: app.clientId, client_secret: app.clientSecret })
      const bearer = { authorization: `Bearer ${String(granted.body.access_token)}` }
      const tx = (chain: string, to: Address) =>
        call(
          "/v1/kernel/tx?wait=10",
          { userId, chain, to: [to], value: ["0"], data: ["0x"], auth: String(verified.body.access_token) },
          bearer
        )
      const reader = createPublicClient({ transport: http(anvil.rpcUrl) })
      const testClient = createTestClient({ mode: "anvil", transport: http(anvil.rpcUrl) })

      // Fees above the network's cap (100 gwei): refused before anything is signed or sent.
      await testClient.setNextBlockBaseFeePerGas({ baseFeePerGas: parseGwei("400") })
      await testClient.mine({ blocks: 1 })
      const bundlerNonce = await reader.getTransactionCount({ address: privateKeyToAccount(anvilDevKey(5)).address })
      const refused = await tx("base-sepolia", freshAddress())
      expect(refused.status, JSON.stringify(refused.body)).toBe(503)
      expect(refused.body.code).toBe("gas_price_above_cap")
      expect(await reader.getTransactionCount({ address: privateKeyToAccount(anvilDevKey(5)).address })).toBe(
        bundlerNonce
      )
      await testClient.setNextBlockBaseFeePerGas({ baseFeePerGas: parseGwei("1") })
      await testClient.mine({ blocks: 1 })

      // The same user's first batch on each chain deploys its Safe: at one address.
      const onSecond = await tx("base-sepolia", freshAddress())
      expect(onSecond.status, JSON.stringify(onSecond.body)).toBe(200)
      expect(onSecond.body.status).toBe("confirmed")
      const onFirst = await tx("anvil", freshAddress())
      expect(onFirst.status, JSON.stringify(onFirst.body)).toBe(200)
      expect(onFirst.body.status).toBe("confirmed")
      const account = onSecond.body.account as Address
      expect(onFirst.body.account).toBe(account)
      expect(await reader.getCode({ address: account })).toMatch(/^0x[0-9a-f]+$/)
      expect(await first.publicClient.getCode({ address: account })).toMatch(/^0x[0-9a-f]+$/)
      expect(await reader.getChainId()).toBe(CHAIN_ID)
    } finally {
      await gateway.dispose()
    }
  })
})
