import {
  type Account,
  BaseError,
  type Chain,
  ContractFunctionRevertedError,
  type Hash,
  type TransactionReceipt
} from "viem"
import type { ChainContracts } from "../../src/chain/networks"
import {
  type DeployerClient,
  deployContracts,
  type ReaderClient,
  type SweeperParameters
} from "../../src/deploy/contracts"
import { devAccount, devnetWallet, sharedDevnet } from "../devnet/shared"

export { devAccount, freshAddress } from "../devnet/shared"

/** The worker's devnet with a Sweeper of this file's own, deployed by dev account 0. */
export interface LocalChain {
  readonly rpcUrl: string
  readonly chain: Chain
  readonly publicClient: ReaderClient
  /** Dev account 0: deployed the contracts; funds and mints. */
  readonly deployer: DeployerClient
  readonly contracts: ChainContracts
  readonly sweeper: SweeperParameters
  /** A wallet client that sends from `account`. */
  readonly walletFor: (account: Account) => DeployerClient
  /** Waits for `hash` and returns its receipt, whatever its status. */
  readonly receipt: (hash: Hash) => Promise<TransactionReceipt>
}

/** Deploys a Sweeper on the worker's devnet: its operator is dev account 1 and its fee 2.5 % to dev account 9. */
export const startLocalChain = async (): Promise<LocalChain> => {
  const devnet = await sharedDevnet()
  const walletFor = (account: Account): DeployerClient => devnetWallet(devnet, account)
  const deployer = walletFor(devAccount(0))
  const sweeper: SweeperParameters = {
    operator: devAccount(1).address,
    feeRecipient: devAccount(9).address,
    feeBps: 250
  }
  const contracts = await deployContracts(deployer, devnet.publicClient, sweeper)
  return {
    rpcUrl: devnet.anvil.rpcUrl,
    chain: devnet.chain,
    publicClient: devnet.publicClient,
    deployer,
    contracts,
    sweeper,
    walletFor,
    receipt: (hash) => devnet.publicClient.waitForTransactionReceipt({ hash })
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
