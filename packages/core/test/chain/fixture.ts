import {
  type Account,
  BaseError,
  type Chain,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  defineChain,
  type Hash,
  http,
  type TransactionReceipt
} from "viem"
import { foundry } from "viem/chains"
import {
  type ChainContracts,
  type DeployerClient,
  deployContracts,
  type ReaderClient,
  type SweeperParameters
} from "../../src/chain/contracts"
import { startAnvil } from "../../src/devnet/anvil"
import { devAccount, sharedDevnet } from "../devnet/shared"

export { devAccount, freshAddress } from "../devnet/shared"

/** A chain with walletgate's contracts deployed by dev account 0 (also the relayer of the tests), for this file. */
export interface LocalChain {
  readonly rpcUrl: string
  /** Stops the chain if the file started it; the worker's devnet stays up. */
  readonly stop: () => Promise<void>
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

/**
 * Deploys the contracts (the Sweeper's operator is dev account 1 and its fee 2.5 % to dev account 9) on the worker's
 * devnet, or on an anvil of its own when `chainId` differs from the devnet's.
 */
export const startLocalChain = async (options: { readonly chainId?: number } = {}): Promise<LocalChain> => {
  const shared = await sharedDevnet()
  const own =
    options.chainId === undefined || options.chainId === shared.anvil.chainId
      ? undefined
      : await startAnvil({ chainId: options.chainId })
  const anvil = own ?? shared.anvil
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
    const stop = async () => {
      await own?.stop()
    }
    return {
      rpcUrl: anvil.rpcUrl,
      stop,
      chain,
      publicClient,
      relayer,
      contracts,
      sweeper,
      walletFor,
      receipt,
      deadlineIn
    }
  } catch (error) {
    await own?.stop()
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
