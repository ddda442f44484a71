import {
  type Account,
  type Address,
  BaseError,
  type Chain,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  defineChain,
  type Hash,
  http,
  type LocalAccount,
  type TransactionReceipt
} from "viem"
import { mnemonicToAccount } from "viem/accounts"
import { foundry } from "viem/chains"
import {
  type ChainContracts,
  type DeployerClient,
  deployContracts,
  type ReaderClient,
  type SweeperParameters
} from "../../src/chain/contracts"
import { type AnvilInstance, anvilMnemonic, startAnvil } from "../../src/devnet/anvil"

/** Anvil's funded dev account number `index` (0 to 9). */
export const devAccount = (index: number): LocalAccount => mnemonicToAccount(anvilMnemonic, { addressIndex: index })

/** A fresh anvil node with walletgate's contracts deployed by dev account 0 (also the relayer of the tests). */
export interface LocalChain {
  readonly anvil: AnvilInstance
  readonly chain: Chain
  readonly publicClient: ReaderClient
  /** Dev account 0: deployed the contracts; submits batches and pays their gas. */
  readonly relayer: DeployerClient
  readonly contracts: ChainContracts
  readonly sweeper: SweeperParameters
  /** A wallet client that sends from `account`. */
  readonly walletFor: (account: Account) => DeployerClient
  /** Waits for `hash` and returns its receipt, whatever its status. */
  readonly receipt: (hash: Hash) => Promise<TransactionReceipt>
  /** The latest block's timestamp plus `seconds`: a deadline. */
  readonly deadlineIn: (seconds: number) => Promise<bigint>
}

/** Starts anvil and deploys the contracts; the Sweeper's operator is dev account 1 and its fee 2.5 % to dev account 9. */
export const startLocalChain = async (options: { readonly chainId?: number } = {}): Promise<LocalChain> => {
  const anvil = await startAnvil(options.chainId === undefined ? {} : { chainId: options.chainId })
  try {
    const chain = defineChain({ ...foundry, id: anvil.chainId, rpcUrls: { default: { http: [anvil.rpcUrl] } } })
    const publicClient = createPublicClient({ chain, transport: http(anvil.rpcUrl), pollingInterval: 20 })
    const walletFor = (account: Account): DeployerClient =>
      createWalletClient({ account, chain, transport: http(anvil.rpcUrl), pollingInterval: 20 })
    const relayer = walletFor(devAccount(0))
    const sweeper: SweeperParameters = {
      operator: devAccount(1).address,
      feeRecipient: devAccount(9).address,
      feeBps: 250
    }
    const contracts = await deployContracts(relayer, publicClient, sweeper)
    const receipt = (hash: Hash) => publicClient.waitForTransactionReceipt({ hash })
    const deadlineIn = async (seconds: number) => (await publicClient.getBlock()).timestamp + BigInt(seconds)
    return { anvil, chain, publicClient, relayer, contracts, sweeper, walletFor, receipt, deadlineIn }
  } catch (error) {
    await anvil.stop()
    throw error
  }
}

/** The decoded custom error a contract call reverted with; fails the test if the call did not revert. */
export const revertOf = async (
  attempt: Promise<unknown>
): Promise<{ readonly errorName: string; readonly args: ReadonlyArray<unknown> }> => {
  try {
    await attempt
  } catch (error) {
    const reverted = error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : null
    if (reverted instanceof ContractFunctionRevertedError && reverted.data !== undefined) {
      return { errorName: reverted.data.errorName, args: reverted.data.args ?? [] }
    }
    throw error
  }
  throw new Error("expected the call to revert, but it succeeded")
}

/** A random address that has never been used: its balances start at zero. */
export const freshAddress = (): Address => {
  const bytes = crypto.getRandomValues(new Uint8Array(20))
  return `0x${Buffer.from(bytes).toString("hex")}`
}
