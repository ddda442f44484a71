import { embeddedPorts, type Gateway, type GatewayPorts, makeGateway } from "@walletgate/core"
import { automationIdentity, deriveOwnerKey, type NetworkConfig, type SpendLimitsOptions } from "@walletgate/core/chain"
import { testTokenArtifact } from "@walletgate/core/devnet"
import { type ApiKeyRecord, type AutomationAccount, automationSafe, type PayoutPlan } from "@walletgate/core/payout"
import type { Layer, Logger } from "effect"
import { type Address, createWalletClient, getAddress, type Hash, http, parseAbiItem, zeroAddress } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { type Devnet, startDevnet } from "../../src/devnet/devnet"
import { anvilDevKey } from "../../src/devnet/local"
import { devAccount } from "../chain/fixture"
import { startRpcProxy } from "../robustness/rpcProxy"

export const MASTER_SECRET = "payout-tests-master-secret-0123456789abcdef"

/** An automation account the fixture registers, before its address is known. */
export interface WantedAccount {
  readonly accountKey: string
  readonly network?: string
  readonly coOwner?: Address
  readonly plan?: (token: Address) => PayoutPlan
}

/** The config of the devnet as a gateway network (`slug`, test or live), its bundler and paymaster included. */
export const devnetNetwork = (
  devnet: Devnet,
  options: {
    readonly slug?: string
    readonly testnet?: boolean
    readonly bundlerUrl?: string
    readonly rpcUrl?: string
  } = {}
): NetworkConfig => ({
  slug: options.slug ?? "anvil",
  chainId: devnet.chain.id,
  rpcUrl: options.rpcUrl ?? devnet.anvil.rpcUrl,
  testnet: options.testnet ?? true,
  // Payouts use none of the relayer's contracts.
  contracts: {
    walletAccountImplementation: zeroAddress,
    walletFactory: zeroAddress,
    disperse: zeroAddress,
    sweeper: zeroAddress,
    multicall: zeroAddress
  },
  relayerKey: anvilDevKey(9),
  pollingIntervalMs: 20,
  erc4337: {
    bundlerUrl: options.bundlerUrl ?? devnet.bundlerUrl,
    // Dev account 4 of anvil's mnemonic signs sponsorships on the devnet.
    paymaster: { address: devnet.deployment.contracts.verifyingPaymaster, signerKey: anvilDevKey(4) }
  }
})

/** The Safe address of the automation account `accountKey` (with `coOwner`) under {@link MASTER_SECRET}. */
export const automationAddress = (accountKey: string, coOwner?: Address): Address =>
  automationSafe(privateKeyToAccount(deriveOwnerKey(MASTER_SECRET, automationIdentity(accountKey))).address, {
    accountKey,
    ...(coOwner === undefined ? {} : { coOwner })
  }).address

/** A devnet (anvil, alto, the ERC-4337 contracts and a paymaster) with a test token and dev account 0 to fund. */
export const startPayoutDevnet = async () => {
  const devnet = await startDevnet()
  const funder = createWalletClient({
    chain: devnet.chain,
    account: devAccount(0),
    transport: http(devnet.anvil.rpcUrl)
  })
  const deployed = await devnet.publicClient.waitForTransactionReceipt({
    hash: await funder.deployContract({ ...testTokenArtifact, args: ["Test USD", "TUSD", 6] })
  })
  if (deployed.contractAddress == null) throw new Error("the test token was not deployed")
  const token = getAddress(deployed.contractAddress)

  const fund = async (address: Address, wei: bigint, tokens = 0n) => {
    if (wei > 0n) {
      await devnet.publicClient.waitForTransactionReceipt({
        hash: await funder.sendTransaction({ to: address, value: wei })
      })
    }
    if (tokens > 0n) {
      await devnet.publicClient.waitForTransactionReceipt({
        hash: await funder.writeContract({
          address: token,
          abi: testTokenArtifact.abi,
          functionName: "mint",
          args: [address, tokens]
        })
      })
    }
  }
  const tokenBalance = (address: Address) =>
    devnet.publicClient.readContract({
      address: token,
      abi: testTokenArtifact.abi,
      functionName: "balanceOf",
      args: [address]
    })
  const balance = (address: Address) => devnet.publicClient.getBalance({ address })
  /** The EntryPoint's `UserOperationEvent`s of `sender`: each operation it executed, once. */
  const executed = (sender: Address) =>
    devnet.publicClient.getLogs({
      address: devnet.deployment.contracts.entryPoint,
      event: parseAbiItem(
        "event UserOperationEvent(bytes32 indexed userOpHash, address indexed sender, address indexed paymaster, uint256 nonce, bool success, uint256 actualGasCost, uint256 actualGasUsed)"
      ),
      args: { sender },
      fromBlock: 0n
    })
  return { devnet, token, fund, tokenBalance, balance, executed }
}

/** A payout devnet and a gateway over it, with the automation accounts and API keys given. */
export const startPayoutFixture = async (options: {
  readonly accounts: ReadonlyArray<WantedAccount>
  readonly apiKeys: (accounts: ReadonlyArray<AutomationAccount>) => ReadonlyArray<ApiKeyRecord>
  readonly spend?: SpendLimitsOptions
  readonly loggers?: ReadonlyArray<Logger.Logger<unknown, unknown>>
  /** The ports from the embedded ones (e.g. merged with Redis stores, a later layer wins). */
  readonly ports?: (embedded: Layer.Layer<GatewayPorts>) => Layer.Layer<GatewayPorts>
  /** Changes to the network configs (a bundler timeout, say). */
  readonly network?: (config: NetworkConfig) => NetworkConfig
  /** Puts a fault-injecting JSON-RPC proxy between the gateway and the bundler. */
  readonly bundlerProxy?: boolean
}) => {
  const chain = await startPayoutDevnet()
  const proxy = options.bundlerProxy === true ? await startRpcProxy(chain.devnet.bundlerUrl) : undefined
  const automationAccounts: ReadonlyArray<AutomationAccount> = options.accounts.map((wanted) => ({
    address: automationAddress(wanted.accountKey, wanted.coOwner),
    network: wanted.network ?? "anvil",
    accountKey: wanted.accountKey,
    ...(wanted.coOwner === undefined ? {} : { coOwner: wanted.coOwner }),
    ...(wanted.plan === undefined ? {} : { plan: wanted.plan(chain.token) })
  }))
  const bundlerUrl = proxy === undefined ? {} : { bundlerUrl: proxy.url }
  const networks = [
    devnetNetwork(chain.devnet, bundlerUrl),
    devnetNetwork(chain.devnet, { slug: "live", testnet: false, ...bundlerUrl })
  ].map((config) => ({
    ...(options.network?.(config) ?? config),
    ...(options.spend === undefined ? {} : { spend: options.spend })
  }))
  const apiKeys = options.apiKeys(automationAccounts)
  const gateway: Gateway = makeGateway({
    ports: (options.ports ?? ((embedded) => embedded))(
      embeddedPorts({ masterSecret: MASTER_SECRET, networks, apiKeys, automationAccounts })
    ),
    ...(process.env.PAYOUT_DEBUG === undefined ? { loggers: options.loggers ?? [] } : {})
  })
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await gateway.fetch(
      new Request(`http://gateway.test${path}`, {
        method,
        headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    )
    const text = await response.text()
    return {
      status: response.status,
      headers: response.headers,
      body: (text === "" ? undefined : JSON.parse(text)) as Record<string, unknown>
    }
  }
  /** Reads the payout's status by id until it is final (20 s at most). */
  const final = async (account: Address, id: unknown, key: string) => {
    const deadline = Date.now() + 20_000
    while (Date.now() < deadline) {
      const answer = await call("GET", `/v1/anvil/account/${account}/payout/${String(id)}`, undefined, {
        "x-api-key": key
      })
      if (answer.body.status !== "submitted") return answer
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    throw new Error(`payout ${String(id)} not final`)
  }
  const stop = async () => {
    await gateway.dispose()
    await proxy?.stop()
    await chain.devnet.stop()
  }
  return { ...chain, automationAccounts, networks, gateway, call, final, proxy, stop }
}

/** A hash as viem types it. */
export const asHash = (value: unknown): Hash => value as Hash
