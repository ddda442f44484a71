import {
  type Chain,
  createPublicClient,
  createWalletClient,
  defineChain,
  http,
  type LocalAccount,
  parseEther
} from "viem"
import { mnemonicToAccount } from "viem/accounts"
import { type AltoInstance, startAlto } from "./alto"
import { type AnvilInstance, anvilMnemonic, startAnvil } from "./anvil"
import { type ChainReader, deployErc4337Contracts, type Erc4337Deployment, type OperatorClient } from "./deploy"
import { anvilDevKey } from "./local"

/** Options of {@link startDevnet}. */
export interface DevnetOptions {
  /** The chain id of the node; 31337 when absent (it needs a presigned Safe singleton factory deployment). */
  readonly chainId?: number
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
  /** Stops alto, then anvil; idempotent. */
  readonly stop: () => Promise<void>
}

/** Dev accounts of the devnet (anvil's mnemonic): 0–2 and 9 serve the existing local network. */
const operatorIndex = 3
const paymasterSignerIndex = 4
const executorIndexes = [5, 6, 7] as const
const utilityIndex = 8

/**
 * Starts anvil on a free port, deploys the ERC-4337 contracts and a VerifyingPaymaster (10 ETH deposit, 1 ETH
 * stake) from dev account 3, and starts alto beside it; `stop()` stops both, and a failure on the way stops what
 * was started.
 */
export const startDevnet = async (options: DevnetOptions = {}): Promise<Devnet> => {
  const anvil = await startAnvil(options.chainId === undefined ? {} : { chainId: options.chainId })
  try {
    const chain = defineChain({
      id: anvil.chainId,
      name: "devnet",
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [anvil.rpcUrl] } }
    })
    const publicClient: ChainReader = createPublicClient({ chain, transport: http(anvil.rpcUrl), pollingInterval: 20 })
    const operator = mnemonicToAccount(anvilMnemonic, { addressIndex: operatorIndex })
    const paymasterSigner = mnemonicToAccount(anvilMnemonic, { addressIndex: paymasterSignerIndex })
    const wallet: OperatorClient = createWalletClient({
      chain,
      account: operator,
      transport: http(anvil.rpcUrl),
      pollingInterval: 20
    })
    const deployment = await deployErc4337Contracts(wallet, publicClient, {
      signer: paymasterSigner.address,
      depositWei: parseEther("10"),
      stakeWei: parseEther("1")
    })
    const alto = await startAlto({
      rpcUrl: anvil.rpcUrl,
      entryPoints: [deployment.contracts.entryPoint],
      executorKeys: executorIndexes.map(anvilDevKey),
      utilityKey: anvilDevKey(utilityIndex),
      // anvil mines on each transaction: poll often.
      blockTimeMs: 100
    })
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
