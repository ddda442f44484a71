import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { type Address, formatEther, formatGwei, getAddress } from "viem"
import { entryPoint07Abi } from "viem/account-abstraction"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import type { PaymasterServiceConfig } from "../chain/networks"
import { resolveSpendLimits } from "../chain/spendLimits"
import type { NetworkSettings } from "../config/networksFile"
import { checkErc4337Code, checkVerifyingPaymaster } from "../deploy/codeChecks"
import { canonicalSafe4337 } from "../deploy/contractPackages"
import type { ChainReader } from "../deploy/deployment"
import { makeJsonRpcBundler } from "../operations/Bundler"
import { paymasterServiceClient } from "../operations/paymasterService"
import { safeAccount, safeBatchCallData } from "../operations/safeAccount"
import { nonceOfKey, randomNonceKey } from "../operations/safeOperation"
import { networkClients } from "./contracts"

/** One line of `walletgate doctor`'s table. */
export interface DoctorCheck {
  /** What was checked (`chain id`, `Safe`, `paymaster deposit`, …). */
  readonly check: string
  /** `fail` makes the command exit 1; `warn` is worth a look but does not. */
  readonly status: "ok" | "warn" | "fail"
  readonly detail: string
}

/** What went wrong in a call, without anything the node or bundler sent back beyond the error's name and short text. */
const reason = (error: unknown): string => {
  if (!(error instanceof Error)) return "error"
  const short = (error as { shortMessage?: unknown }).shortMessage
  return typeof short === "string" ? `${error.name}: ${short}` : `${error.name}: ${error.message.split("\n")[0]}`
}

/**
 * Checks a network as the gateway will use it: the node's chain id, the code at each canonical contract's address,
 * the operator's paymaster (its code, EntryPoint, signer and deposit), the bundler (its chain and EntryPoint), the
 * fee caps against the current base fee and the spend budgets against the deposit. Never throws: a call that fails
 * is a failed check.
 */
export const runDoctor = async (settings: NetworkSettings): Promise<ReadonlyArray<DoctorCheck>> => {
  const checks: Array<DoctorCheck> = []
  const add = (check: string, status: DoctorCheck["status"], detail: string) => checks.push({ check, status, detail })
  const { reader } = networkClients(settings)

  let reported: number
  try {
    reported = await reader.getChainId()
  } catch (error) {
    add("node", "fail", `${settings.rpcUrl} did not answer: ${reason(error)}`)
    return checks
  }
  if (reported !== settings.chainId) {
    add("chain id", "fail", `the node reports ${reported}, the configuration says ${settings.chainId}`)
    return checks
  }
  add("chain id", "ok", String(reported))

  try {
    for (const code of await checkErc4337Code(reader)) {
      const missing = code.codeHash === emptyCodeHash
      add(
        code.contract,
        code.ok ? "ok" : "fail",
        missing
          ? `no code at ${code.address}: run walletgate contracts deploy --network ${settings.slug}`
          : code.ok
            ? `${code.address} ${code.expectedCodeHash === undefined ? "has code" : `code hash ${code.codeHash.slice(0, 10)}… (${code.source})`}`
            : `${code.address} has code hash ${code.codeHash}, expected ${code.expectedCodeHash}`
      )
    }
  } catch (error) {
    add("contracts", "fail", `could not read the contracts: ${reason(error)}`)
  }

  const entryPoint = canonicalSafe4337().entryPoint.address
  const fees = await reader.getBlock({ blockTag: "latest" }).then(
    (block) => block.baseFeePerGas ?? 0n,
    () => undefined
  )
  let deposit: bigint | undefined
  const paymaster = settings.paymaster
  if (settings.paymasterService !== undefined) {
    await checkPaymasterService(settings, settings.paymasterService, reader, entryPoint, fees ?? 0n, add)
  } else if (paymaster === undefined) {
    add("paymaster", "ok", "none: each Safe pays its own gas")
  } else if (paymaster.address === undefined) {
    add(
      "paymaster",
      "fail",
      `no address: run walletgate contracts deploy --network ${settings.slug} --new-paymaster, then set it in the file`
    )
  } else {
    const signer = privateKeyToAccount(paymaster.signerKey).address
    try {
      const problem = await checkVerifyingPaymaster(reader, paymaster.address, { entryPoint, signer })
      add("paymaster", problem === undefined ? "ok" : "fail", problem ?? `${paymaster.address}, signer ${signer}`)
      deposit = await reader.readContract({
        address: entryPoint,
        abi: entryPoint07Abi,
        functionName: "balanceOf",
        args: [paymaster.address]
      })
      const minimum = paymaster.minDepositWei ?? 1n
      add(
        "paymaster deposit",
        deposit >= minimum ? "ok" : "fail",
        `${formatEther(deposit)} ETH at the EntryPoint${paymaster.minDepositWei === undefined ? "" : ` (minimum ${formatEther(minimum)})`}${deposit >= minimum ? "" : `: top it up with walletgate contracts deploy --network ${settings.slug} --deposit <amount>`}`
      )
    } catch (error) {
      add("paymaster", "fail", `could not read ${paymaster.address}: ${reason(error)}`)
    }
  }

  await checkBundler(settings, entryPoint, add)

  const caps = settings.erc4337.feeCaps
  if (fees !== undefined && caps?.maxFeePerGas !== undefined) {
    const above = fees > caps.maxFeePerGas
    add(
      "fee caps",
      above ? "warn" : "ok",
      `base fee ${formatGwei(fees)} gwei, cap ${formatGwei(caps.maxFeePerGas)} gwei${above ? ": operations are refused (gas_price_above_cap) until it falls" : ""}`
    )
  }

  const limits = resolveSpendLimits(settings.slug, settings.testnet, settings.spend)
  const price = caps?.maxFeePerGas ?? (fees === undefined ? undefined : fees * 2n)
  const windowCost = price === undefined ? undefined : BigInt(limits.perNetwork) * price
  const short = deposit !== undefined && windowCost !== undefined && deposit < windowCost
  add(
    "spend budgets",
    short ? "warn" : "ok",
    `${limits.perNetwork.toLocaleString("en")} gas per ${limits.windowSeconds} s on the network, ${limits.perUser.toLocaleString("en")} per user, ${limits.perApp.toLocaleString("en")} per app, ${limits.batchCeiling.toLocaleString("en")} per batch` +
      (windowCost === undefined
        ? ""
        : `; a full window costs up to ${formatEther(windowCost)} ETH at ${formatGwei(price ?? 0n)} gwei`) +
      (short ? ": more than the deposit" : "")
  )
  return checks
}

const emptyCodeHash = "0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"

/** The bundler answers for this chain and serves EntryPoint v0.7. */
const checkBundler = async (
  settings: NetworkSettings,
  entryPoint: Address,
  add: (check: string, status: DoctorCheck["status"], detail: string) => void
) => {
  const bundler = makeJsonRpcBundler([
    {
      chainId: settings.chainId,
      url: settings.erc4337.bundlerUrl,
      timeoutMs: settings.erc4337.bundlerTimeoutMs ?? 10_000
    }
  ])
  const served = await Effect.runPromise(
    bundler.supportedEntryPoints(settings.chainId).pipe(
      Effect.map((addresses) => ({ ok: true as const, addresses })),
      Effect.catch((error) => Effect.succeed({ ok: false as const, error: error._tag }))
    )
  )
  if (!served.ok) {
    add("bundler", "fail", `${settings.erc4337.bundlerUrl} did not answer eth_supportedEntryPoints (${served.error})`)
    return
  }
  const supports = served.addresses.some((address) => getAddress(address) === entryPoint)
  add(
    "bundler",
    supports ? "ok" : "fail",
    supports
      ? `serves EntryPoint v0.7 ${entryPoint}`
      : `serves ${served.addresses.join(", ") || "no EntryPoint"}, not EntryPoint v0.7 ${entryPoint}`
  )
}

/**
 * The ERC-7677 service answers `pm_getPaymasterStubData` for a dry operation (a new Safe's, one empty call; nothing is
 * signed or sent) with a well-formed stub, and the paymaster it names has code.
 */
const checkPaymasterService = async (
  settings: NetworkSettings,
  service: PaymasterServiceConfig,
  reader: ChainReader,
  entryPoint: Address,
  baseFee: bigint,
  add: (check: string, status: DoctorCheck["status"], detail: string) => void
) => {
  const account = safeAccount({ owners: [privateKeyToAccount(generatePrivateKey()).address], threshold: 1 })
  const client = paymasterServiceClient(settings, entryPoint, service)
  const stub = await Effect.runPromise(
    client
      .stubData({
        sender: account.address,
        nonce: nonceOfKey(randomNonceKey()),
        factory: account.factory,
        factoryData: account.factoryData,
        callData: safeBatchCallData(account, [{ to: account.address, value: 0n, data: "0x" }]),
        callGasLimit: 0n,
        verificationGasLimit: 0n,
        preVerificationGas: 0n,
        maxFeePerGas: baseFee * 2n + 1_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n
      })
      .pipe(Effect.result)
  )
  if (Result.isFailure(stub)) {
    const error = stub.failure
    add(
      "paymaster service",
      "fail",
      error._tag === "SponsorshipRefused"
        ? `refused a dry operation (error ${error.code}: ${error.message}): check the context the file sends`
        : `did not answer pm_getPaymasterStubData properly (${error.cause})`
    )
    return
  }
  const named = stub.success.fields.paymaster
  const code = await reader.getCode({ address: named }).catch(() => undefined)
  const deployed = code !== undefined && code !== "0x"
  add(
    "paymaster service",
    deployed ? "ok" : "fail",
    deployed
      ? `answers pm_getPaymasterStubData: paymaster ${named}`
      : `answers pm_getPaymasterStubData with paymaster ${named}, which has no code on this chain`
  )
}

/** The checks as a table: one line each, columns aligned. */
export const doctorTable = (slug: string, checks: ReadonlyArray<DoctorCheck>): string => {
  const width = Math.max(...checks.map((check) => check.check.length), 5)
  const lines = checks.map((check) => `${check.status.padEnd(4)}  ${check.check.padEnd(width)}  ${check.detail}`)
  const failed = checks.filter((check) => check.status === "fail").length
  return [
    `walletgate doctor: ${slug}`,
    ...lines,
    failed === 0 ? "all checks passed" : `${failed} check${failed === 1 ? "" : "s"} failed`
  ].join("\n")
}
