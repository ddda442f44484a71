import { createPublicClient, createWalletClient, formatEther, type Hex } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { networkChain, networkTransport } from "../chain/networks"
import type { NetworkSettings } from "../config/networksFile"
import {
  type ChainReader,
  type DeploymentStep,
  deployCanonicalContracts,
  deployVerifyingPaymaster,
  type OperatorClient
} from "../deploy/deployment"

/** A client reading a configured network's node, and one sending from `key`'s account, through its RPC URLs. */
export const networkClients = (
  settings: NetworkSettings,
  key?: Hex
): { readonly reader: ChainReader; readonly wallet: OperatorClient | undefined } => {
  const chain = networkChain(settings)
  const transport = networkTransport(settings)
  const pollingInterval = settings.pollingIntervalMs ?? 1_000
  const reader: ChainReader = createPublicClient({ chain, transport, pollingInterval })
  const wallet: OperatorClient | undefined =
    key === undefined
      ? undefined
      : createWalletClient({ chain, transport, account: privateKeyToAccount(key), pollingInterval })
  return { reader, wallet }
}

/** Options of {@link deployNetworkContracts}. */
export interface DeployOptions {
  /** The operator's key (`WALLETGATE_DEPLOYER_KEY`): pays for everything, owns the paymaster. */
  readonly deployerKey: Hex
  /** Deploy a paymaster when the file names none (its address is printed, to be set in the file). */
  readonly newPaymaster: boolean
  /** The paymaster's deposit to reach (topped up when below); the file's `minDeposit` when absent. */
  readonly depositWei: bigint | undefined
  /** Stake to add when the paymaster has none; none when absent. */
  readonly stakeWei: bigint | undefined
  readonly unstakeDelaySeconds: number | undefined
}

/** What `contracts deploy` did, and what the operator must do next (a new paymaster's address for the file). */
export interface DeployReport {
  readonly steps: ReadonlyArray<DeploymentStep>
  readonly notes: ReadonlyArray<string>
}

/**
 * Deploys whatever is missing on a configured network: the canonical ERC-4337 and Safe contracts, then the operator's
 * paymaster (the file's, checked; or a new one with `newPaymaster`) with its deposit and stake. Refuses a node whose
 * chain id is not the configured one before sending anything.
 */
export const deployNetworkContracts = async (
  settings: NetworkSettings,
  options: DeployOptions
): Promise<DeployReport> => {
  const { reader, wallet } = networkClients(settings, options.deployerKey)
  if (wallet === undefined) throw new Error("no deployer")
  const reported = await reader.getChainId()
  if (reported !== settings.chainId) {
    throw new Error(
      `the node of ${settings.slug} reports chain id ${reported}, the configuration says ${settings.chainId}: nothing sent`
    )
  }
  const canonical = await deployCanonicalContracts(wallet, reader)
  const steps = [...canonical.steps]
  const notes: Array<string> = []
  const paymaster = settings.paymaster
  if (paymaster === undefined) {
    notes.push("no paymaster configured: each Safe pays its own gas")
  } else if (paymaster.address === undefined && !options.newPaymaster) {
    notes.push(
      `the file names no paymaster address: run again with --new-paymaster to deploy one owned by ${wallet.account.address}`
    )
  } else {
    const signer = privateKeyToAccount(paymaster.signerKey).address
    const address = await deployVerifyingPaymaster(
      wallet,
      reader,
      canonical.contracts.entryPoint,
      {
        ...(paymaster.address === undefined ? {} : { address: paymaster.address }),
        signer,
        depositWei: options.depositWei ?? paymaster.minDepositWei ?? 0n,
        stakeWei: options.stakeWei ?? 0n,
        ...(options.unstakeDelaySeconds === undefined ? {} : { unstakeDelaySeconds: options.unstakeDelaySeconds })
      },
      steps
    )
    if (paymaster.address === undefined) {
      notes.push(`set "paymaster": { "address": "${address}", … } for ${settings.slug} in the networks file`)
    }
  }
  return { steps, notes }
}

/** The report as lines: one per contract, then what to do next; says so when nothing was sent. */
export const deployTable = (slug: string, report: DeployReport): string => {
  const width = Math.max(...report.steps.map((step) => step.contract.length))
  const lines = report.steps.map(
    (step) =>
      `${step.action.padEnd(8)}  ${step.contract.padEnd(width)}  ${step.address}${step.transaction === undefined ? "" : `  ${step.transaction}`}${step.gasUsed === undefined ? "" : `  ${step.gasUsed} gas`}${step.value === undefined ? "" : `  ${formatEther(step.value)} ETH`}`
  )
  const sent = report.steps.filter((step) => step.action !== "present").length
  return [
    `walletgate contracts deploy: ${slug}`,
    ...lines,
    sent === 0
      ? "nothing deployed: every contract is already in place"
      : `${sent} transaction${sent === 1 ? "" : "s"} sent`,
    ...report.notes
  ].join("\n")
}
