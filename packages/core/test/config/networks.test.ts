import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ConfigurationError, gatewayNetworksFromEnv, networkSettingsFromEnv } from "@walletgate/core/config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import { parseGwei, zeroAddress } from "viem"
import { describe, expect, it } from "vitest"

const dir = mkdtempSync(join(tmpdir(), "walletgate-networks-"))
const SIGNER = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"
const PAYMASTER = "0x1234567890AbcdEF1234567890aBcdef12345678"

/** Writes `json` (or raw text) to a fresh file and returns its path. */
const fileWith = (content: unknown): string => {
  const path = join(dir, `${crypto.randomUUID()}.json`)
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content, null, 2))
  return path
}

const read = (env: Record<string, string>, paymasterAddressRequired = true) =>
  Effect.runPromise(
    Effect.provideService(
      networkSettingsFromEnv({ paymasterAddressRequired }),
      ConfigProvider.ConfigProvider,
      ConfigProvider.fromEnv({ env })
    )
  )

const failure = (env: Record<string, string>, paymasterAddressRequired = true): Promise<ConfigurationError> =>
  read(env, paymasterAddressRequired).then(
    () => {
      throw new Error("expected a ConfigurationError")
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(ConfigurationError)
      return error as ConfigurationError
    }
  )

const baseSepolia = {
  chainId: 84532,
  testnet: true,
  rpcUrls: ["https://sepolia.base.org", "https://base-sepolia-rpc.publicnode.com"],
  bundlerUrl: "https://bundler.example.com/84532",
  paymaster: { address: PAYMASTER, signerKey: { env: "BASE_SEPOLIA_PAYMASTER_KEY" }, minDeposit: "0.5 ether" },
  confirmations: 3,
  feeCaps: { maxFeePerGas: "30 gwei", maxPriorityFeePerGas: "1.5 gwei" },
  spend: { batchCeiling: 1_000_000, perUser: 3_000_000 }
}

describe("networks from a file or the environment", () => {
  it("none set: no networks", async () => {
    expect(await read({})).toEqual([])
  })

  it("a file: RPC URLs with fallbacks, the bundler, the paymaster with its key from the variable it names, caps, limits", async () => {
    const [network, ...others] = await read({
      WALLETGATE_NETWORKS_FILE: fileWith({ networks: { "base-sepolia": baseSepolia } }),
      BASE_SEPOLIA_PAYMASTER_KEY: SIGNER
    })
    expect(others).toEqual([])
    expect(network).toEqual({
      slug: "base-sepolia",
      chainId: 84532,
      rpcUrl: "https://sepolia.base.org",
      fallbackRpcUrls: ["https://base-sepolia-rpc.publicnode.com"],
      testnet: true,
      spend: { batchCeiling: 1_000_000, perUser: 3_000_000 },
      erc4337: {
        bundlerUrl: "https://bundler.example.com/84532",
        // minDeposit is also the gateway's low mark: GET /v1/health is degraded below the deposit doctor asks for.
        paymaster: { address: PAYMASTER, signerKey: SIGNER, minDepositWei: 500_000_000_000_000_000n },
        confirmations: 3,
        feeCaps: { maxFeePerGas: parseGwei("30"), maxPriorityFeePerGas: parseGwei("1.5") }
      },
      paymaster: { address: PAYMASTER, signerKey: SIGNER, minDepositWei: 500_000_000_000_000_000n }
    })
  })

  it("the same JSON in WALLETGATE_NETWORKS; a key written in the file is taken as it is (the operator's choice)", async () => {
    const [network] = await read({
      WALLETGATE_NETWORKS: JSON.stringify({
        networks: {
          anvil: {
            chainId: 31337,
            rpcUrls: ["http://127.0.0.1:8545"],
            bundlerUrl: "http://127.0.0.1:4337",
            paymaster: { address: PAYMASTER, signerKey: SIGNER }
          }
        }
      })
    })
    expect(network?.testnet).toBe(false)
    expect(network?.fallbackRpcUrls).toBeUndefined()
    expect(network?.erc4337.paymaster).toEqual({ address: PAYMASTER, signerKey: SIGNER })
  })

  it("a wrong field: the file, the path inside it, what is wrong and an example", async () => {
    const path = fileWith({
      networks: { "base-sepolia": { ...baseSepolia, paymaster: { ...baseSepolia.paymaster, address: "0x1234" } } }
    })
    const error = await failure({ WALLETGATE_NETWORKS_FILE: path, BASE_SEPOLIA_PAYMASTER_KEY: SIGNER })
    expect(error.setting).toBe("WALLETGATE_NETWORKS_FILE")
    expect(error.message).toContain(
      `WALLETGATE_NETWORKS_FILE (${path}) is invalid at /networks/base-sepolia/paymaster/address`
    )
    expect(error.message).toContain("Expected an address")
    expect(error.message).toContain('for example "paymaster": {')
  })

  it("a misspelt field is refused, not ignored", async () => {
    const { bundlerUrl, ...rest } = baseSepolia
    const error = await failure({
      WALLETGATE_NETWORKS: JSON.stringify({ networks: { base: { ...rest, bundlerURL: bundlerUrl } } }),
      BASE_SEPOLIA_PAYMASTER_KEY: SIGNER
    })
    expect(error.setting).toBe("WALLETGATE_NETWORKS")
    expect(error.message).toMatch(/\/networks\/base\/(bundlerUrl: Required|bundlerURL: Unexpected field)/)
    expect(error.message).toMatch(
      /\(and 1 more problem: \/networks\/base\/(bundlerURL: Unexpected field|bundlerUrl: Required)\)/
    )
  })

  it("a malformed key written in the file, or JSON broken next to it, is never shown", async () => {
    const badKey = `${SIGNER}ff`
    const error = await failure({
      WALLETGATE_NETWORKS_FILE: fileWith({ networks: { base: { ...baseSepolia, paymaster: { signerKey: badKey } } } })
    })
    expect(error.message).toContain("/networks/base/paymaster/signerKey")
    expect(error.message).not.toContain(badKey.slice(2, 20))
    const broken = await failure({ WALLETGATE_NETWORKS_FILE: fileWith(`{ "networks": { "signerKey": ${SIGNER} } }`) })
    expect(broken.message).toMatch(/is invalid at \/: not JSON \(/)
    expect(broken.message).not.toContain(SIGNER.slice(2, 20))
  })

  it("the variable a file names for a key: unset, or not a key, named without its value", async () => {
    const path = fileWith({ networks: { "base-sepolia": baseSepolia } })
    const unset = await failure({ WALLETGATE_NETWORKS_FILE: path })
    expect(unset.setting).toBe("BASE_SEPOLIA_PAYMASTER_KEY")
    expect(unset.message).toContain("BASE_SEPOLIA_PAYMASTER_KEY is not set")
    expect(unset.message).toContain("/networks/base-sepolia/paymaster/signerKey")
    const wrong = "not-a-key-but-a-secret-all-the-same"
    const invalid = await failure({ WALLETGATE_NETWORKS_FILE: path, BASE_SEPOLIA_PAYMASTER_KEY: wrong })
    expect(invalid.message).toContain("BASE_SEPOLIA_PAYMASTER_KEY is invalid")
    expect(`${invalid.message}${invalid.stack}`).not.toContain(wrong)
  })

  it("a paymaster without an address: refused for the gateway, accepted for contracts deploy (which makes it)", async () => {
    const { address: _address, ...withoutAddress } = baseSepolia.paymaster
    const env = {
      WALLETGATE_NETWORKS_FILE: fileWith({
        networks: { "base-sepolia": { ...baseSepolia, paymaster: withoutAddress } }
      }),
      BASE_SEPOLIA_PAYMASTER_KEY: SIGNER
    }
    const error = await failure(env)
    expect(error.message).toContain("/networks/base-sepolia/paymaster/address: Required")
    const [network] = await read(env, false)
    expect(network?.paymaster?.address).toBeUndefined()
    expect(network?.erc4337.paymaster).toBeUndefined()
  })

  it("limits that contradict each other, two networks on one chain, a missing file, both sources set", async () => {
    const limits = await failure({
      WALLETGATE_NETWORKS_FILE: fileWith({
        networks: { base: { ...baseSepolia, spend: { batchCeiling: 5_000_000, perUser: 1_000_000 } } }
      }),
      BASE_SEPOLIA_PAYMASTER_KEY: SIGNER
    })
    expect(limits.message).toContain(
      "is invalid at /networks/base/spend: network base: spend.batchCeiling must not exceed spend.perUser"
    )
    const twice = await failure({
      WALLETGATE_NETWORKS_FILE: fileWith({ networks: { a: baseSepolia, b: baseSepolia } }),
      BASE_SEPOLIA_PAYMASTER_KEY: SIGNER
    })
    expect(twice.message).toContain("/networks/b/chainId: chain id 84532 is already another network's")
    const missing = await failure({ WALLETGATE_NETWORKS_FILE: join(dir, "nothing-here.json") })
    expect(missing.message).toContain("could not be read (ENOENT)")
    const both = await failure({ WALLETGATE_NETWORKS_FILE: "/x.json", WALLETGATE_NETWORKS: "{}" })
    expect(both.message).toContain("both set")
  })

  it("amounts need their unit; whole numbers in range", async () => {
    const error = await failure({
      WALLETGATE_NETWORKS: JSON.stringify({
        networks: { base: { ...baseSepolia, feeCaps: { maxFeePerGas: "30" }, confirmations: 0 } }
      }),
      BASE_SEPOLIA_PAYMASTER_KEY: SIGNER
    })
    expect(error.message).toContain("/networks/base/feeCaps/maxFeePerGas: Expected an amount with its unit")
    expect(error.message).toContain("/networks/base/confirmations: Expected a whole number from 1 to 1000")
  })
})

describe("the gateway's networks (gatewayNetworksFromEnv)", () => {
  const gatewayNetworks = (env: Record<string, string>) =>
    Effect.runPromise(
      Effect.provideService(gatewayNetworksFromEnv, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))
    )
  const SWEEPER = "0x5FbDB2315678afecb367f032d93F642f64180aa3"

  it("each network as the gateway serves it: its bundler and paymaster, walletgate's sweeper when the file names one", async () => {
    const [withSweeper, without] = await gatewayNetworks({
      WALLETGATE_NETWORKS: JSON.stringify({
        networks: {
          "base-sepolia": { ...baseSepolia, sweeper: SWEEPER.toLowerCase() },
          base: { ...baseSepolia, chainId: 8453 }
        }
      }),
      BASE_SEPOLIA_PAYMASTER_KEY: SIGNER
    })
    expect(withSweeper).toMatchObject({
      slug: "base-sepolia",
      rpcUrl: "https://sepolia.base.org",
      erc4337: {
        bundlerUrl: "https://bundler.example.com/84532",
        paymaster: { address: PAYMASTER, signerKey: SIGNER }
      },
      contracts: { sweeper: SWEEPER }
    })
    expect(without?.contracts).toEqual({ sweeper: zeroAddress })
    // The file's own description of the paymaster stays out of the gateway's network.
    expect(withSweeper).not.toHaveProperty("paymaster")
  })

  it("an ERC-7677 paymaster service instead: its URL, context and timeout, and no signer key is read", async () => {
    const [network] = await gatewayNetworks({
      WALLETGATE_NETWORKS: JSON.stringify({
        networks: {
          "base-sepolia": {
            ...baseSepolia,
            paymaster: { url: "https://paymaster.example.com/84532?key=k", context: { app: "wgc_1" }, timeoutMs: 2000 }
          }
        }
      })
    })
    expect(network?.erc4337).toMatchObject({
      paymasterService: { url: "https://paymaster.example.com/84532?key=k", context: { app: "wgc_1" }, timeoutMs: 2000 }
    })
    expect(network?.erc4337).not.toHaveProperty("paymaster")
    // http only to this machine (walletgate paymaster serve beside the gateway).
    const local = await gatewayNetworks({
      WALLETGATE_NETWORKS: JSON.stringify({
        networks: { "base-sepolia": { ...baseSepolia, paymaster: { url: "http://127.0.0.1:4337" } } }
      })
    })
    expect(local[0]?.erc4337).toMatchObject({ paymasterService: { url: "http://127.0.0.1:4337" } })
  })

  it("a paymaster is one of the two: both forms at once, a plain-http or malformed URL, a large or non-object context are refused", async () => {
    for (const paymaster of [
      { url: "https://paymaster.example.com", signerKey: SIGNER },
      { url: "https://paymaster.example.com", address: PAYMASTER, signerKey: SIGNER },
      { url: "http://paymaster.example.com" },
      { url: "ftp://127.0.0.1/pm" },
      { url: `https://paymaster.example.com/${"a".repeat(2_100)}` },
      { url: "https://paymaster.example.com", context: { blob: "x".repeat(5_000) } },
      { url: "https://paymaster.example.com", context: ["app"] },
      { url: "https://paymaster.example.com", timeoutMs: 0 }
    ]) {
      const error = await Effect.runPromise(
        Effect.flip(
          Effect.provideService(
            gatewayNetworksFromEnv,
            ConfigProvider.ConfigProvider,
            ConfigProvider.fromEnv({
              env: { WALLETGATE_NETWORKS: JSON.stringify({ networks: { base: { ...baseSepolia, paymaster } } }) }
            })
          )
        )
      )
      expect(error.message, JSON.stringify(paymaster).slice(0, 80)).toContain("is invalid at /networks/base/paymaster")
      expect(error.message).not.toContain(SIGNER)
    }
  })

  it("refuses a paymaster without its address: the gateway would sponsor through nothing", async () => {
    const error = await Effect.runPromise(
      Effect.flip(
        Effect.provideService(
          gatewayNetworksFromEnv,
          ConfigProvider.ConfigProvider,
          ConfigProvider.fromEnv({
            env: {
              WALLETGATE_NETWORKS: JSON.stringify({
                networks: { base: { ...baseSepolia, paymaster: { signerKey: { env: "BASE_SEPOLIA_PAYMASTER_KEY" } } } }
              }),
              BASE_SEPOLIA_PAYMASTER_KEY: SIGNER
            }
          })
        )
      )
    )
    expect(error.message).toContain("/networks/base/paymaster/address: Required")
  })
})

describe("docs/networks.example.json", () => {
  it("decodes as it is, its keys read from the variables it names", async () => {
    const path = new URL("../../../../docs/networks.example.json", import.meta.url).pathname
    const networks = await read({
      WALLETGATE_NETWORKS_FILE: path,
      BASE_SEPOLIA_PAYMASTER_KEY: SIGNER,
      BASE_PAYMASTER_KEY: SIGNER
    })
    expect(networks.map((network) => [network.slug, network.chainId])).toEqual([
      ["base-sepolia", 84532],
      ["base", 8453]
    ])
  })
})
