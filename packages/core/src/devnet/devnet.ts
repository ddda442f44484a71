import {
  type Address,
  type Chain,
  createPublicClient,
  createWalletClient,
  defineChain,
  http,
  type LocalAccount,
  parseEther
} from "viem"
import { mnemonicToAccount } from "viem/accounts"
import type { ChainContracts, NetworkConfig } from "../chain/networks"
import { canonicalSafe4337 } from "../deploy/contractPackages"
import {
  type ChainReader,
  deployErc4337Contracts,
  type Erc4337Deployment,
  type OperatorClient
} from "../deploy/deployment"
import { type AltoInstance, startAlto } from "./alto"
import { type AnvilInstance, anvilMnemonic, startAnvil } from "./anvil"
import { anvilDevKey, deployLocalContracts, devnetAccountIndexes } from "./local"

/** Options of {@link startDevnet}. */
export interface DevnetOptions {
  /** The chain id of the node; 31337 when absent (it needs a presigned Safe singleton factory deployment). */
  readonly chainId?: number
  /** Mine a block every this many seconds (a real network's rhythm); on each transaction when absent. */
  readonly blockTimeSeconds?: number
  /** The network's slug in {@link Devnet.network}; `anvil` when absent. */
  readonly slug?: string
}

/** A local anvil node with the ERC-4337 contracts, the operator's paymaster and an alto bundler beside it. */
export interface Devnet {
  readonly anvil: AnvilInstance
  readonly alto: AltoInstance
  readonly chain: Chain
  readonly publicClient: ChainReader
  /** The ERC-7769 endpoint. */
  readonly bundlerUrl: string
  readonly deployment: Erc4337Deployment
  /** Dev account 3: deployed the contracts, owns the paymaster. */
  readonly operator: LocalAccount
  /** Dev account 4: signs paymaster sponsorships. */
  readonly paymasterSigner: LocalAccount
  /**
   * The gateway's configuration of this network (a test network): its bundler and the operator's paymaster, which
   * sponsors every operation, and walletgate's dust sweeper.
   */
  readonly network: NetworkConfig
  /** walletgate's own contract on it: the dust sweeper. */
  readonly contracts: ChainContracts
  /** Sets an address's ETH balance (anvil's `anvil_setBalance`): test funds for the local chain only. */
  readonly setBalance: (address: Address, wei: bigint) => Promise<void>
  /** Stops alto, then anvil; idempotent. */
  readonly stop: () => Promise<void>
}

/**
 * Starts anvil on a free port, deploys the ERC-4337 contracts and a VerifyingPaymaster (10 ETH deposit, 1 ETH
 * stake) from dev account 3 and walletgate's sweeper from dev account 0, and starts alto beside it; `stop()` stops both, and a failure on the way stops what
 * was started.
 */
export const startDevnet = async (options: DevnetOptions = {}): Promise<Devnet> => {
  const anvil = await startAnvil({
    ...(options.chainId === undefined ? {} : { chainId: options.chainId }),
    ...(options.blockTimeSeconds === undefined ? {} : { blockTimeSeconds: options.blockTimeSeconds })
  })
  try {
    const chain = defineChain({
      id: anvil.chainId,
      name: "devnet",
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [anvil.rpcUrl] } }
    })
    const publicClient: ChainReader = createPublicClient({ chain, transport: http(anvil.rpcUrl), pollingInterval: 20 })
    const operator = mnemonicToAccount(anvilMnemonic, { addressIndex: devnetAccountIndexes.erc4337Operator })
    const paymasterSigner = mnemonicToAccount(anvilMnemonic, { addressIndex: devnetAccountIndexes.paymasterSigner })
    const wallet: OperatorClient = createWalletClient({
      chain,
      account: operator,
      transport: http(anvil.rpcUrl),
      pollingInterval: 20
    })
    // alto takes seconds to load: it starts while the contracts deploy (its EntryPoint's address is canonical, and
    // its keys are not the deployers'), so that a start costs the longer of the two, not their sum.
    const starting = startAlto({
      rpcUrl: anvil.rpcUrl,
      entryPoints: [canonicalSafe4337().entryPoint.address],
      executorKeys: devnetAccountIndexes.bundlerExecutors.map(anvilDevKey),
      utilityKey: anvilDevKey(devnetAccountIndexes.bundlerUtility),
      // On automine anvil mines on each transaction: poll often.
      blockTimeMs: options.blockTimeSeconds === undefined ? 100 : options.blockTimeSeconds * 1000
    })
    const deploying = (async () => {
      const deployment = await deployErc4337Contracts(wallet, publicClient, {
        signer: paymasterSigner.address,
        depositWei: parseEther("10"),
        stakeWei: parseEther("1")
      })
      const local = await deployLocalContracts(anvil, options.slug === undefined ? {} : { slug: options.slug })
      return { deployment, local }
    })()
    const [altoStart, deployed] = await Promise.allSettled([starting, deploying])
    if (altoStart.status === "rejected") throw altoStart.reason
    if (deployed.status === "rejected") {
      await altoStart.value.stop()
      throw deployed.reason
    }
    const alto = altoStart.value
    const { deployment, local } = deployed.value
    let stopping: Promise<void> | undefined
    return {
      anvil,
      alto,
      chain,
      publicClient,
      bundlerUrl: alto.bundlerUrl,
      deployment,
      operator,
      paymasterSigner,
      network: {
        ...local.network,
        erc4337: {
          bundlerUrl: alto.bundlerUrl,
          paymaster: {
            address: deployment.contracts.verifyingPaymaster,
            signerKey: anvilDevKey(devnetAccountIndexes.paymasterSigner)
          }
        }
      },
      contracts: local.contracts,
      setBalance: local.setBalance,
      stop: () => {
        stopping ??= alto.stop().finally(() => anvil.stop())
        return stopping
      }
    }
  } catch (error) {
    await anvil.stop()
    throw error
  }
}
