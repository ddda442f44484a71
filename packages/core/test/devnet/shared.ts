// The one chain fixture of the tests: the devnet of this vitest worker (see ./broker.ts), shared by the files the
// worker runs one after another. A file isolates itself by what it creates: fresh master secrets (so fresh wallets),
// fresh tokens, a fresh sweeper, fresh app ids. It never stops, pauses or rewinds the chain: to play a node or a
// bundler that fails, put an RPC proxy (./rpcProxy.ts) in front of it.
import {
  type Account,
  type Address,
  type Chain,
  createPublicClient,
  createTestClient,
  createWalletClient,
  decodeAbiParameters,
  defineChain,
  deploylessCallViaBytecodeBytecode,
  encodeFunctionData,
  type Hash,
  type Hex,
  http,
  type LocalAccount,
  parseAbiItem,
  size,
  sliceHex,
  toHex
} from "viem"
import { entryPoint07Abi } from "viem/account-abstraction"
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from "viem/accounts"
import { inject } from "vitest"
import { testTokenArtifact } from "../../src/chain/artifacts"
import { multicall3Address } from "../../src/chain/multicall3"
import type { NetworkConfig } from "../../src/chain/networks"
import { type DeployerClient, deployTestToken } from "../../src/deploy/contracts"
import type { ChainReader, Erc4337Contracts } from "../../src/deploy/deployment"
import { anvilMnemonic } from "../../src/devnet/anvil"
import type { SafeCall } from "../../src/operations/safeAccount"

/** What the broker tells a test file about its worker's devnet (JSON). */
export interface DevnetDescription {
  readonly rpcUrl: string
  readonly chainId: number
  readonly anvilPort: number
  readonly bundlerUrl: string
  readonly altoPort: number
  readonly altoStartupMs: number
  readonly contracts: Erc4337Contracts
  /** The devnet as a gateway network (slug `anvil`, a test network, its bundler and the operator's paymaster). */
  readonly network: NetworkConfig
}

/** The worker's devnet, with clients of this test file. */
export interface SharedDevnet {
  readonly anvil: { readonly rpcUrl: string; readonly chainId: number; readonly port: number }
  readonly alto: { readonly bundlerUrl: string; readonly port: number; readonly startupMs: number }
  readonly chain: Chain
  readonly publicClient: ChainReader
  /** The ERC-7769 endpoint. */
  readonly bundlerUrl: string
  readonly deployment: { readonly contracts: Erc4337Contracts }
  /** The gateway's configuration of this network. */
  readonly network: NetworkConfig
  /** Dev account 3: deployed the ERC-4337 contracts, owns the paymaster (as `startDevnet` assigns them). */
  readonly operator: LocalAccount
  /** Dev account 4: signs paymaster sponsorships. */
  readonly paymasterSigner: LocalAccount
  /** Sets an address's ETH balance (`anvil_setBalance`). */
  readonly setBalance: (address: Address, wei: bigint) => Promise<void>
  /** Sends a raw JSON-RPC request to anvil (`anvil_mine`, `evm_increaseTime`…) and returns its result. */
  readonly anvilRequest: (method: string, params: ReadonlyArray<unknown>) => Promise<unknown>
}

let shared: Promise<SharedDevnet> | undefined

const askBroker = async (): Promise<SharedDevnet> => {
  const worker = process.env.VITEST_POOL_ID ?? "1"
  const response = await fetch(`${inject("devnetBroker")}/devnet/${worker}`)
  if (!response.ok) throw new Error(`the devnet broker could not start a devnet: ${await response.text()}`)
  const described = (await response.json()) as DevnetDescription
  const chain = defineChain({
    id: described.chainId,
    name: "devnet",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [described.rpcUrl] } }
  })
  const transport = http(described.rpcUrl)
  const testClient = createTestClient({ chain, mode: "anvil", transport })
  return {
    anvil: { rpcUrl: described.rpcUrl, chainId: described.chainId, port: described.anvilPort },
    alto: { bundlerUrl: described.bundlerUrl, port: described.altoPort, startupMs: described.altoStartupMs },
    chain,
    publicClient: createPublicClient({ chain, transport, pollingInterval: 20 }),
    bundlerUrl: described.bundlerUrl,
    deployment: { contracts: described.contracts },
    network: described.network,
    operator: devAccount(3),
    paymasterSigner: devAccount(4),
    setBalance: (address, wei) => testClient.setBalance({ address, value: wei }),
    anvilRequest: async (method, params) => {
      const answer = await fetch(described.rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params })
      })
      return ((await answer.json()) as { result: unknown }).result
    }
  }
}

/** This worker's devnet, started by the broker the first time any file asks; never stop it from a test. */
export const sharedDevnet = (): Promise<SharedDevnet> => {
  shared ??= askBroker().catch((error: unknown) => {
    shared = undefined
    throw error
  })
  return shared
}

/** A master secret no other file uses: the wallets and automation accounts derived from it are new on the chain. */
export const freshMasterSecret = (): string => `test-master-secret-${toHex(crypto.getRandomValues(new Uint8Array(24)))}`

/** Anvil's funded dev account `index` (0 to 9); the tests fund and deploy from dev account 0. */
export const devAccount = (index: number): LocalAccount => mnemonicToAccount(anvilMnemonic, { addressIndex: index })

/** A wallet client of the devnet that sends from `account` (dev account 0 by default). */
export const devnetWallet = (devnet: SharedDevnet, account: Account = devAccount(0)): DeployerClient =>
  createWalletClient({ chain: devnet.chain, account, transport: http(devnet.anvil.rpcUrl), pollingInterval: 20 })

/** A test token of this file on the devnet, minted by dev account 0. */
export interface DevnetToken {
  readonly address: Address
  /** Mints `amount` to `to` and waits for it. */
  readonly mint: (to: Address, amount: bigint) => Promise<void>
  readonly balanceOf: (holder: Address) => Promise<bigint>
  /** The call of a batch that transfers `amount` of the token to `to`. */
  readonly transferCall: (to: Address, amount: bigint) => SafeCall
}

/** Deploys a new TestToken (anyone may mint) from dev account 0: each file its own, so balances start at zero. */
export const deployDevnetToken = async (
  devnet: SharedDevnet,
  token: { readonly name: string; readonly symbol: string; readonly decimals: number }
): Promise<DevnetToken> => {
  const wallet = devnetWallet(devnet)
  const address = await deployTestToken(wallet, devnet.publicClient, token)
  return {
    address,
    mint: async (to, amount) => {
      const hash = await wallet.writeContract({
        address,
        abi: testTokenArtifact.abi,
        functionName: "mint",
        args: [to, amount]
      })
      await devnet.publicClient.waitForTransactionReceipt({ hash })
    },
    balanceOf: (holder) =>
      devnet.publicClient.readContract({
        address,
        abi: testTokenArtifact.abi,
        functionName: "balanceOf",
        args: [holder]
      }),
    transferCall: (to, amount) => ({
      to: address,
      value: 0n,
      data: encodeFunctionData({ abi: testTokenArtifact.abi, functionName: "transfer", args: [to, amount] })
    })
  }
}

/** Sends `wei` from dev account 0 to `to` and waits for it. */
export const sendEther = async (devnet: SharedDevnet, to: Address, wei: bigint): Promise<void> => {
  const hash = await devnetWallet(devnet).sendTransaction({ to, value: wei })
  await devnet.publicClient.waitForTransactionReceipt({ hash })
}

/** The operator's paymaster's deposit at the EntryPoint: what sponsoring operations spends. */
export const paymasterDeposit = (devnet: SharedDevnet): Promise<bigint> =>
  devnet.publicClient.readContract({
    address: devnet.deployment.contracts.entryPoint,
    abi: entryPoint07Abi,
    functionName: "balanceOf",
    args: [devnet.deployment.contracts.verifyingPaymaster]
  })

const userOperationEvent = parseAbiItem(
  "event UserOperationEvent(bytes32 indexed userOpHash, address indexed sender, address indexed paymaster, uint256 nonce, bool success, uint256 actualGasCost, uint256 actualGasUsed)"
)

/** The EntryPoint's `UserOperationEvent`s of one operation or one sender: each execution, once. */
export const userOperationEvents = (
  devnet: SharedDevnet,
  filter: { readonly userOpHash?: Hash; readonly sender?: Address }
) =>
  devnet.publicClient.getLogs({
    address: devnet.deployment.contracts.entryPoint,
    event: userOperationEvent,
    args: filter,
    fromBlock: 0n
  })

/** A random address that has never been used: its balances start at zero. */
export const freshAddress = (): Address => privateKeyToAccount(generatePrivateKey()).address

/**
 * Puts Multicall3 at its canonical address on the devnet (anvil has none), as every major chain has it. Its code is
 * the one viem ships for deployless reads, taken from such a read's calldata and run once: never a copy in this
 * repository. Take it away with {@link removeMulticall3} so that the next files of the worker see the devnet as it was.
 */
export const installMulticall3 = async (devnet: SharedDevnet): Promise<void> => {
  const bodies: Array<string> = []
  const client = createPublicClient({
    chain: devnet.chain,
    transport: http(devnet.anvil.rpcUrl, {
      onFetchRequest: async (request) => {
        bodies.push(await request.clone().text())
      }
    })
  })
  await client.multicall({ contracts: [], deployless: true, allowFailure: true })
  const data = bodies
    .map((body) => (JSON.parse(body) as { params?: ReadonlyArray<{ readonly data?: Hex }> }).params?.[0]?.data)
    .find((found) => found?.startsWith(deploylessCallViaBytecodeBytecode))
  if (data === undefined) throw new Error("viem made no deployless call")
  const [creationCode] = decodeAbiParameters(
    [{ type: "bytes" }, { type: "bytes" }],
    sliceHex(data, size(deploylessCallViaBytecodeBytecode))
  )
  const runtime = await devnet.publicClient.call({ data: creationCode })
  if (runtime.data === undefined) throw new Error("Multicall3's creation code returned nothing")
  await devnet.anvilRequest("anvil_setCode", [multicall3Address, runtime.data])
}

/** Takes Multicall3 away from the devnet again (see {@link installMulticall3}). */
export const removeMulticall3 = async (devnet: SharedDevnet): Promise<void> => {
  await devnet.anvilRequest("anvil_setCode", [multicall3Address, "0x"])
}
