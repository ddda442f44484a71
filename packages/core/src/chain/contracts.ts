import {
  type Account,
  type Address,
  type Chain,
  getAddress,
  type Hash,
  type Hex,
  type LocalAccount,
  type PublicClient,
  type Transport,
  type TypedDataDefinition,
  type WalletClient
} from "viem"
import {
  disperseArtifact,
  multicallArtifact,
  sweeperArtifact,
  testTokenArtifact,
  walletAccountArtifact,
  walletFactoryArtifact
} from "./artifacts"

/** A wallet client that can send: it has an account and a chain. */
export type DeployerClient = WalletClient<Transport, Chain, Account>

/** A public client on a known chain. */
export type ReaderClient = PublicClient<Transport, Chain>

/** Addresses of the contracts walletgate deploys on a network. */
export interface ChainContracts {
  /** The WalletAccount implementation every account is a clone of. */
  readonly walletAccountImplementation: Address
  /** Creates accounts at counterfactual addresses and runs their first batch. */
  readonly walletFactory: Address
  /** Pays many recipients in one transaction. */
  readonly disperse: Address
  /** Buys holders' dust tokens for ETH at the operator's rates. */
  readonly sweeper: Address
  /** Our `aggregate3`-compatible read batcher; give it to viem's `multicall` as `multicallAddress`. */
  readonly multicall: Address
}

/** Constructor parameters of the Sweeper contract. */
export interface SweeperParameters {
  /** The account allowed to post rates. */
  readonly operator: Address
  /** Where fees go. */
  readonly feeRecipient: Address
  /** The fee in basis points of the ETH a taker pays, 0 to 10 000. */
  readonly feeBps: number
}

/** One call of a batch, as WalletAccount's `Call` struct. */
export interface BatchCall {
  readonly to: Address
  readonly value: bigint
  readonly data: Hex
}

/** The EIP-712 types of a WalletAccount batch, exactly as `BATCH_TYPEHASH` and `CALL_TYPEHASH` in the contract. */
export const batchTypes = {
  Batch: [
    { name: "calls", type: "Call[]" },
    { name: "nonce", type: "uint256" },
    { name: "deadline", type: "uint256" }
  ],
  Call: [
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "data", type: "bytes" }
  ]
} as const

/** What a batch signature covers: the account (and its chain) that runs it, its calls, nonce and deadline. */
export interface BatchToSign {
  /** The WalletAccount that will execute the batch (the EIP-712 `verifyingContract`). */
  readonly account: Address
  readonly chainId: number
  readonly calls: ReadonlyArray<BatchCall>
  /** The account's current `nonce()`. */
  readonly nonce: bigint
  /** Unix time in seconds after which the batch may no longer run. */
  readonly deadline: bigint
}

/** The EIP-712 typed data of a batch, for viem's `signTypedData` and `hashTypedData`. */
export const batchTypedData = (batch: BatchToSign): TypedDataDefinition<typeof batchTypes, "Batch"> => ({
  domain: { name: "WalletAccount", version: "1", chainId: batch.chainId, verifyingContract: batch.account },
  types: batchTypes,
  primaryType: "Batch",
  message: { calls: batch.calls, nonce: batch.nonce, deadline: batch.deadline }
})

/** Signs a batch with the account owner's key: the `signature` argument of `execute` and `deployAndExecute`. */
export const signBatch = (owner: LocalAccount, batch: BatchToSign): Promise<Hex> =>
  owner.signTypedData(batchTypedData(batch))

/** Waits for a contract creation and returns the new contract's address, checksummed (receipts give it in lower case). */
const deployed = async (publicClient: ReaderClient, hash: Hash, what: string): Promise<Address> => {
  const { status, contractAddress } = await publicClient.waitForTransactionReceipt({ hash })
  if (status !== "success") throw new Error(`deploying ${what}: transaction ${hash} reverted`)
  if (contractAddress === null || contractAddress === undefined) throw new Error(`deploying ${what}: no address`)
  return getAddress(contractAddress)
}

/**
 * Deploys walletgate's contracts from the wallet client's account, one after another: the WalletAccount
 * implementation, WalletFactory, Disperse, Sweeper and Multicall.
 */
export const deployContracts = async (
  walletClient: DeployerClient,
  publicClient: ReaderClient,
  sweeper: SweeperParameters
): Promise<ChainContracts> => {
  const walletAccountImplementation = await deployed(
    publicClient,
    await walletClient.deployContract({ ...walletAccountArtifact }),
    "WalletAccount"
  )
  const walletFactory = await deployed(
    publicClient,
    await walletClient.deployContract({ ...walletFactoryArtifact, args: [walletAccountImplementation] }),
    "WalletFactory"
  )
  const disperse = await deployed(publicClient, await walletClient.deployContract({ ...disperseArtifact }), "Disperse")
  const sweeperAddress = await deployed(
    publicClient,
    await walletClient.deployContract({
      ...sweeperArtifact,
      args: [sweeper.operator, sweeper.feeRecipient, BigInt(sweeper.feeBps)]
    }),
    "Sweeper"
  )
  const multicall = await deployed(
    publicClient,
    await walletClient.deployContract({ ...multicallArtifact }),
    "Multicall"
  )
  return { walletAccountImplementation, walletFactory, disperse, sweeper: sweeperAddress, multicall }
}

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

/** The address of `owner`'s account with `salt` from `factory`, whether or not it is deployed yet. */
export const predictAccountAddress = (
  publicClient: ReaderClient,
  factory: Address,
  owner: Address,
  salt: Hex
): Promise<Address> =>
  publicClient.readContract({
    address: factory,
    abi: walletFactoryArtifact.abi,
    functionName: "accountAddress",
    args: [owner, salt]
  })
