import {
  type Address,
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  type Hex,
  http,
  toHex
} from "viem"
import { mnemonicToAccount } from "viem/accounts"
import type { ChainContracts, NetworkConfig } from "../chain/networks"
import { deployContracts, type ReaderClient } from "../deploy/contracts"
import { type AnvilInstance, anvilMnemonic, startAnvil } from "./anvil"

/**
 * The dev accounts (indexes of anvil's mnemonic) the local chain's own contracts and services use, by role. Their
 * balances move by gas, fees and refunds: a program on the devnet that pays an account and checks its balance
 * (a demo, a test) pays another one.
 */
export const devnetAccountIndexes = {
  /** Deploys the sweeper (`deployLocalContracts`). */
  sweeperDeployer: 0,
  /** Sets the sweeper's rates. */
  sweeperOperator: 1,
  /** Receives the sweeper's fees. */
  sweeperFeeRecipient: 9,
  /** Deploys the ERC-4337 contracts and owns the paymaster (`startDevnet`). */
  erc4337Operator: 3,
  /** Signs the paymaster's sponsorships. */
  paymasterSigner: 4,
  /** Send alto's bundles: each pays a bundle's gas and is paid the EntryPoint's refund. */
  bundlerExecutors: [5, 6, 7],
  /** Refills alto's executors and deploys its simulation contracts. */
  bundlerUtility: 8
} as const

/** The private key of anvil's funded dev account `index` (0 to 9). Test keys: never use them elsewhere. */
export const anvilDevKey = (index: number): Hex => {
  const key = mnemonicToAccount(anvilMnemonic, { addressIndex: index }).getHdKey().privateKey
  // An HD account derived from a mnemonic always has its private key.
  if (key === null) throw new Error("anvil dev key unavailable")
  return toHex(key)
}

/** A local anvil node with walletgate's own contract (the sweeper), without a bundler. */
export interface LocalNetwork {
  readonly anvil: AnvilInstance
  /** The gateway configuration of this network (a test network, slug `anvil` by default). */
  readonly network: NetworkConfig
  readonly contracts: ChainContracts
  /** A client reading the node. */
  readonly publicClient: ReaderClient
  /** Sets an address's ETH balance (anvil's `anvil_setBalance`): test funds for the local chain only. */
  readonly setBalance: (address: Address, wei: bigint) => Promise<void>
  /** Stops the node. */
  readonly stop: () => Promise<void>
}

/**
 * Deploys walletgate's own contract, the dust sweeper, on `anvil`: dev account 0 deploys, dev account 1 operates the
 * sweeper and dev account 9 takes its fees (2.5 %). The network it gives has no ERC-4337 pipeline.
 */
export const deployLocalContracts = async (
  anvil: AnvilInstance,
  options: { readonly slug?: string } = {}
): Promise<Omit<LocalNetwork, "stop">> => {
  const chain = defineChain({
    id: anvil.chainId,
    name: "anvil",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [anvil.rpcUrl] } }
  })
  const transport = http(anvil.rpcUrl)
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 20 })
  const deployer = createWalletClient({
    chain,
    transport,
    account: mnemonicToAccount(anvilMnemonic, { addressIndex: devnetAccountIndexes.sweeperDeployer })
  })
  const contracts = await deployContracts(deployer, publicClient, {
    operator: mnemonicToAccount(anvilMnemonic, { addressIndex: devnetAccountIndexes.sweeperOperator }).address,
    feeRecipient: mnemonicToAccount(anvilMnemonic, { addressIndex: devnetAccountIndexes.sweeperFeeRecipient }).address,
    feeBps: 250
  })
  return {
    anvil,
    contracts,
    publicClient,
    setBalance: (address, wei) =>
      createTestClient({ chain, mode: "anvil", transport }).setBalance({ address, value: wei }),
    network: {
      slug: options.slug ?? "anvil",
      chainId: anvil.chainId,
      rpcUrl: anvil.rpcUrl,
      testnet: true,
      contracts,
      pollingIntervalMs: 20
    }
  }
}

/**
 * Starts anvil on a free port and deploys walletgate's sweeper ({@link deployLocalContracts}). Without a
 * bundler: `startDevnet` starts the network with its ERC-4337 pipeline.
 */
export const startLocalNetwork = async (
  options: { readonly slug?: string; readonly chainId?: number } = {}
): Promise<LocalNetwork> => {
  const anvil = await startAnvil(options.chainId === undefined ? {} : { chainId: options.chainId })
  try {
    const local = await deployLocalContracts(anvil, options.slug === undefined ? {} : { slug: options.slug })
    return { ...local, stop: anvil.stop }
  } catch (error) {
    await anvil.stop()
    throw error
  }
}
