import {
  type Account,
  type Address,
  type Chain,
  getAddress,
  type Hash,
  type PublicClient,
  type Transport,
  type WalletClient
} from "viem"
import { sweeperArtifact, testTokenArtifact } from "../chain/artifacts"
import type { ChainContracts } from "../chain/networks"

/** A wallet client that can send: it has an account and a chain. */
export type DeployerClient = WalletClient<Transport, Chain, Account>

/** A public client on a known chain. */
export type ReaderClient = PublicClient<Transport, Chain>

/** Constructor parameters of the Sweeper contract. */
export interface SweeperParameters {
  /** The account allowed to post rates. */
  readonly operator: Address
  /** Where fees go. */
  readonly feeRecipient: Address
  /** The fee in basis points of the ETH a taker pays, 0 to 10 000. */
  readonly feeBps: number
}

/** Waits for a contract creation and returns the new contract's address, checksummed (receipts give it in lower case). */
const deployed = async (publicClient: ReaderClient, hash: Hash, what: string): Promise<Address> => {
  const { status, contractAddress } = await publicClient.waitForTransactionReceipt({ hash })
  if (status !== "success") throw new Error(`deploying ${what}: transaction ${hash} reverted`)
  if (contractAddress === null || contractAddress === undefined) throw new Error(`deploying ${what}: no address`)
  return getAddress(contractAddress)
}

/** Deploys walletgate's own contract, the Sweeper, from the wallet client's account. */
export const deployContracts = async (
  walletClient: DeployerClient,
  publicClient: ReaderClient,
  sweeper: SweeperParameters
): Promise<ChainContracts> => ({
  sweeper: await deployed(
    publicClient,
    await walletClient.deployContract({
      ...sweeperArtifact,
      args: [sweeper.operator, sweeper.feeRecipient, BigInt(sweeper.feeBps)]
    }),
    "Sweeper"
  )
})

/** Constructor parameters of a TestToken. */
export interface TestTokenParameters {
  readonly name: string
  readonly symbol: string
  readonly decimals: number
}

/** Deploys a TestToken, an ERC-20 anyone can mint: for tests and the local playground only. */
export const deployTestToken = async (
  walletClient: DeployerClient,
  publicClient: ReaderClient,
  token: TestTokenParameters
): Promise<Address> =>
  deployed(
    publicClient,
    await walletClient.deployContract({ ...testTokenArtifact, args: [token.name, token.symbol, token.decimals] }),
    `TestToken ${token.symbol}`
  )
