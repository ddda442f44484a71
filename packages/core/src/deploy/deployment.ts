import {
  type Account,
  type Address,
  type Chain,
  concat,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  getContractAddress,
  type Hash,
  type Hex,
  keccak256,
  type PublicClient,
  type Transport,
  type WalletClient,
  zeroHash
} from "viem"
import { entryPoint07Abi } from "viem/account-abstraction"
import { verifyingPaymasterAbi } from "../operations/verifyingPaymaster"
import {
  type CanonicalSafe4337,
  canonicalSafe4337,
  creationCode,
  deterministicDeployerAddress,
  entryPoint07Salt,
  type PackagedContract,
  singletonFactoryAddress,
  singletonFactoryDeployment
} from "./contractPackages"

/** A client that reads the chain the contracts go to. */
export type ChainReader = PublicClient<Transport, Chain>

/** A client that sends from the operator's account. */
export type OperatorClient = WalletClient<Transport, Chain, Account>

/** The ERC-4337 contracts walletgate needs on a network, at their addresses there. */
export interface Erc4337Contracts {
  readonly entryPoint: Address
  readonly safe: Address
  readonly safeL2: Address
  readonly safeProxyFactory: Address
  readonly multiSend: Address
  readonly multiSendCallOnly: Address
  readonly compatibilityFallbackHandler: Address
  readonly safe4337Module: Address
  readonly safeModuleSetup: Address
  /** The operator's VerifyingPaymaster (CREATE from the operator: its address is the operator's, not canonical). */
  readonly verifyingPaymaster: Address
}

/** The operator's VerifyingPaymaster: who signs sponsorships and how much it keeps at the EntryPoint. */
export interface PaymasterSettings {
  /** The paymaster already deployed by this operator, if any: reused (checked) instead of deploying another. */
  readonly address?: Address
  /** The key that signs sponsorships (`verifyingSigner`), kept by the gateway. */
  readonly signer: Address
  /** Deposit at the EntryPoint to reach: topped up to this amount when below `minDepositWei`. */
  readonly depositWei: bigint
  /** Below this deposit, top up; `depositWei` when absent. */
  readonly minDepositWei?: bigint
  /** Stake to add when the paymaster has none (bundlers want staked paymasters). */
  readonly stakeWei: bigint
  /** The stake's unstake delay, in seconds; one day when absent. */
  readonly unstakeDelaySeconds?: number
}

/** What one {@link deployErc4337Contracts} run did, contract by contract. */
export interface DeploymentStep {
  readonly contract: string
  readonly address: Address
  /** "present": code was already there, nothing sent. */
  readonly action: "present" | "deployed" | "funded" | "staked"
  readonly transaction?: Hash
  readonly gasUsed?: bigint
  /** What was sent with it (a deposit, a stake), in wei. */
  readonly value?: bigint
}

/** The canonical contracts (all but the operator's paymaster) and what was done to reach them. */
export interface CanonicalDeployment {
  readonly contracts: Omit<Erc4337Contracts, "verifyingPaymaster">
  readonly steps: ReadonlyArray<DeploymentStep>
}

/** The contracts and what was done to reach them. */
export interface Erc4337Deployment {
  readonly contracts: Erc4337Contracts
  readonly steps: ReadonlyArray<DeploymentStep>
}

/** A contract that goes to a canonical address through a CREATE2 deployer. */
interface Create2Target {
  readonly name: PackagedContract
  readonly expected: Address
  readonly deployer: Address
  readonly salt: Hash
  readonly initCode: Hex
}

const hasCode = async (client: ChainReader, address: Address): Promise<boolean> => {
  const code = await client.getCode({ address })
  return code !== undefined && code !== "0x"
}

/** The CREATE2 routes to the canonical addresses (see docs/decisions.md: Safe contracts through the Safe singleton
 * factory, the EntryPoint and the Safe 4337 modules through the deterministic deployer). */
const create2Targets = (canonical: CanonicalSafe4337): ReadonlyArray<Create2Target> => {
  const viaSafeFactory = (name: PackagedContract, expected: Address): Create2Target => ({
    name,
    expected,
    deployer: singletonFactoryAddress,
    salt: zeroHash,
    initCode: creationCode(name)
  })
  return [
    {
      name: "EntryPoint",
      expected: canonical.entryPoint.address,
      deployer: deterministicDeployerAddress,
      salt: entryPoint07Salt,
      initCode: creationCode("EntryPoint")
    },
    viaSafeFactory("Safe", canonical.safe.address),
    viaSafeFactory("SafeL2", canonical.safeL2.address),
    viaSafeFactory("SafeProxyFactory", canonical.safeProxyFactory.address),
    viaSafeFactory("MultiSend", canonical.multiSend.address),
    viaSafeFactory("MultiSendCallOnly", canonical.multiSendCallOnly.address),
    viaSafeFactory("CompatibilityFallbackHandler", canonical.compatibilityFallbackHandler.address),
    {
      name: "Safe4337Module",
      expected: canonical.safe4337Module.address,
      deployer: deterministicDeployerAddress,
      salt: zeroHash,
      initCode: concat([
        creationCode("Safe4337Module"),
        encodeAbiParameters([{ type: "address" }], [canonical.entryPoint.address])
      ])
    },
    {
      name: "SafeModuleSetup",
      expected: canonical.safeModuleSetup.address,
      deployer: deterministicDeployerAddress,
      salt: zeroHash,
      initCode: creationCode("SafeModuleSetup")
    }
  ]
}

/** Sends a transaction from the operator and waits for it; throws if it reverted. */
const sendAndWait = async (
  wallet: OperatorClient,
  reader: ChainReader,
  request: { readonly to: Address; readonly data?: Hex; readonly value?: bigint }
) => {
  const hash = await wallet.sendTransaction({
    account: wallet.account,
    chain: wallet.chain,
    to: request.to,
    ...(request.data === undefined ? {} : { data: request.data }),
    ...(request.value === undefined ? {} : { value: request.value })
  })
  const receipt = await reader.waitForTransactionReceipt({ hash })
  if (receipt.status !== "success") throw new Error(`transaction ${hash} to ${request.to} reverted`)
  return receipt
}

/**
 * Deploys whatever is missing of the ERC-4337 contracts at their canonical addresses, from the operator's account,
 * then the operator's VerifyingPaymaster with its deposit and stake ({@link deployVerifyingPaymaster}). Idempotent:
 * what is already there is checked and skipped, so a second run sends nothing.
 */
export const deployErc4337Contracts = async (
  wallet: OperatorClient,
  reader: ChainReader,
  paymaster: PaymasterSettings
): Promise<Erc4337Deployment> => {
  const canonical = await deployCanonicalContracts(wallet, reader)
  const steps = [...canonical.steps]
  const verifyingPaymaster = await deployVerifyingPaymaster(
    wallet,
    reader,
    canonical.contracts.entryPoint,
    paymaster,
    steps
  )
  return { contracts: { ...canonical.contracts, verifyingPaymaster }, steps }
}

/**
 * Deploys whatever is missing of the canonical contracts (EntryPoint v0.7, the Safe singleton factory, Safe 1.4.1,
 * the Safe 4337 modules) from the operator's account. Works on any network: the Safe singleton factory comes from
 * its presigned deployment for the chain (the package has one for 500+ chains), the rest through CREATE2 deployers
 * that exist on most chains; every address is checked against the registries before anything is sent, and what is
 * already there is skipped.
 */
export const deployCanonicalContracts = async (
  wallet: OperatorClient,
  reader: ChainReader
): Promise<CanonicalDeployment> => {
  const canonical = canonicalSafe4337()
  const chainId = await reader.getChainId()
  const steps: Array<DeploymentStep> = []
  const targets = create2Targets(canonical)
  for (const target of targets) {
    const address = getContractAddress({
      opcode: "CREATE2",
      from: target.deployer,
      salt: target.salt,
      bytecodeHash: keccak256(target.initCode)
    })
    if (address !== target.expected) {
      throw new Error(`${target.name} from its package would land at ${address}, not at ${target.expected}`)
    }
  }
  if (!(await hasCode(reader, deterministicDeployerAddress))) {
    throw new Error(`chain ${chainId} has no deterministic deployer at ${deterministicDeployerAddress}`)
  }

  if (await hasCode(reader, singletonFactoryAddress)) {
    steps.push({ contract: "SafeSingletonFactory", address: singletonFactoryAddress, action: "present" })
  } else {
    const presigned = singletonFactoryDeployment(chainId)
    if (presigned === undefined || presigned.address !== singletonFactoryAddress) {
      throw new Error(`@safe-global/safe-singleton-factory has no presigned deployment for chain ${chainId}`)
    }
    const needed = presigned.gasPrice * presigned.gasLimit
    const balance = await reader.getBalance({ address: presigned.signer })
    if (balance < needed) await sendAndWait(wallet, reader, { to: presigned.signer, value: needed - balance })
    const hash = await reader.sendRawTransaction({ serializedTransaction: presigned.transaction })
    const receipt = await reader.waitForTransactionReceipt({ hash })
    if (receipt.status !== "success" || !(await hasCode(reader, singletonFactoryAddress))) {
      throw new Error(`the Safe singleton factory's presigned deployment ${hash} failed`)
    }
    steps.push({
      contract: "SafeSingletonFactory",
      address: singletonFactoryAddress,
      action: "deployed",
      transaction: hash,
      gasUsed: receipt.gasUsed
    })
  }

  for (const target of targets) {
    if (await hasCode(reader, target.expected)) {
      steps.push({ contract: target.name, address: target.expected, action: "present" })
      continue
    }
    // Both deployers take `salt ‖ initCode` as calldata.
    const receipt = await sendAndWait(wallet, reader, {
      to: target.deployer,
      data: concat([target.salt, target.initCode])
    })
    if (!(await hasCode(reader, target.expected))) {
      throw new Error(`${target.name} is not at ${target.expected} after ${receipt.transactionHash}`)
    }
    steps.push({
      contract: target.name,
      address: target.expected,
      action: "deployed",
      transaction: receipt.transactionHash,
      gasUsed: receipt.gasUsed
    })
  }

  return {
    contracts: {
      entryPoint: canonical.entryPoint.address,
      safe: canonical.safe.address,
      safeL2: canonical.safeL2.address,
      safeProxyFactory: canonical.safeProxyFactory.address,
      multiSend: canonical.multiSend.address,
      multiSendCallOnly: canonical.multiSendCallOnly.address,
      compatibilityFallbackHandler: canonical.compatibilityFallbackHandler.address,
      safe4337Module: canonical.safe4337Module.address,
      safeModuleSetup: canonical.safeModuleSetup.address
    },
    steps
  }
}

/**
 * Deploys the operator's VerifyingPaymaster (plain CREATE: it is `Ownable(msg.sender)`), or checks the one at
 * `settings.address` (its owner and signer must be the operator's), then tops up its deposit and adds its stake where
 * missing; each step is appended to `steps`.
 */
export const deployVerifyingPaymaster = async (
  wallet: OperatorClient,
  reader: ChainReader,
  entryPoint: Address,
  settings: PaymasterSettings,
  steps: Array<DeploymentStep>
): Promise<Address> => {
  let paymaster: Address
  if (settings.address !== undefined && (await hasCode(reader, settings.address))) {
    paymaster = settings.address
    const [owner, signer] = await Promise.all([
      reader.readContract({ address: paymaster, abi: verifyingPaymasterAbi, functionName: "owner" }),
      reader.readContract({ address: paymaster, abi: verifyingPaymasterAbi, functionName: "verifyingSigner" })
    ])
    if (
      getAddress(owner) !== getAddress(wallet.account.address) ||
      getAddress(signer) !== getAddress(settings.signer)
    ) {
      throw new Error(`the paymaster at ${paymaster} has owner ${owner} and signer ${signer}, not the operator's`)
    }
    steps.push({ contract: "VerifyingPaymaster", address: paymaster, action: "present" })
  } else {
    const hash = await wallet.sendTransaction({
      account: wallet.account,
      chain: wallet.chain,
      data: concat([
        creationCode("VerifyingPaymaster"),
        encodeAbiParameters([{ type: "address" }, { type: "address" }], [entryPoint, settings.signer])
      ])
    })
    const receipt = await reader.waitForTransactionReceipt({ hash })
    if (receipt.status !== "success" || receipt.contractAddress == null) {
      throw new Error(`the VerifyingPaymaster deployment ${hash} failed`)
    }
    paymaster = getAddress(receipt.contractAddress)
    steps.push({
      contract: "VerifyingPaymaster",
      address: paymaster,
      action: "deployed",
      transaction: hash,
      gasUsed: receipt.gasUsed
    })
  }

  const info = await reader.readContract({
    address: entryPoint,
    abi: entryPoint07Abi,
    functionName: "getDepositInfo",
    args: [paymaster]
  })
  if (info.deposit < (settings.minDepositWei ?? settings.depositWei)) {
    const receipt = await sendAndWait(wallet, reader, {
      to: entryPoint,
      data: encodeFunctionData({ abi: entryPoint07Abi, functionName: "depositTo", args: [paymaster] }),
      value: settings.depositWei - info.deposit
    })
    steps.push({
      contract: "VerifyingPaymaster",
      address: paymaster,
      action: "funded",
      transaction: receipt.transactionHash,
      value: settings.depositWei - info.deposit
    })
  }
  if (!info.staked && settings.stakeWei > 0n) {
    const receipt = await sendAndWait(wallet, reader, {
      to: paymaster,
      data: encodeFunctionData({
        abi: verifyingPaymasterAbi,
        functionName: "addStake",
        args: [settings.unstakeDelaySeconds ?? 86_400]
      }),
      value: settings.stakeWei
    })
    steps.push({
      contract: "VerifyingPaymaster",
      address: paymaster,
      action: "staked",
      transaction: receipt.transactionHash,
      value: settings.stakeWei
    })
  }
  return paymaster
}
