import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import {
  getCompatibilityFallbackHandlerDeployment,
  getMultiSendCallOnlyDeployment,
  getMultiSendDeployment,
  getProxyFactoryDeployment,
  getSafeL2SingletonDeployment,
  getSafeSingletonDeployment,
  type SingletonDeployment
} from "@safe-global/safe-deployments"
import { getSafe4337ModuleDeployment, getSafeModuleSetupDeployment } from "@safe-global/safe-modules-deployments"
import * as Schema from "effect/Schema"
import { type Address, getAddress, type Hash, type Hex } from "viem"
import { entryPoint07Address } from "viem/account-abstraction"

/**
 * The third-party contracts of the ERC-4337 pipeline, by the name of their compiled artifact. Their bytecode is
 * read from the npm package that publishes it (never copied into this repository); see {@link creationCode}.
 */
export type PackagedContract =
  | "EntryPoint"
  | "VerifyingPaymaster"
  | "Safe"
  | "SafeL2"
  | "SafeProxy"
  | "SafeProxyFactory"
  | "MultiSend"
  | "MultiSendCallOnly"
  | "CompatibilityFallbackHandler"
  | "Safe4337Module"
  | "SafeModuleSetup"

const safeContracts = "@safe-global/safe-contracts/build/artifacts/contracts"
const safe4337 = "@safe-global/safe-4337/build/artifacts/contracts"

/** Where each artifact sits in its package (versions pinned in packages/core/package.json). */
const artifactPaths: Record<PackagedContract, string> = {
  EntryPoint: "@account-abstraction/contracts/artifacts/EntryPoint.json",
  VerifyingPaymaster: "@account-abstraction/contracts/artifacts/VerifyingPaymaster.json",
  Safe: `${safeContracts}/Safe.sol/Safe.json`,
  SafeL2: `${safeContracts}/SafeL2.sol/SafeL2.json`,
  SafeProxy: `${safeContracts}/proxies/SafeProxy.sol/SafeProxy.json`,
  SafeProxyFactory: `${safeContracts}/proxies/SafeProxyFactory.sol/SafeProxyFactory.json`,
  MultiSend: `${safeContracts}/libraries/MultiSend.sol/MultiSend.json`,
  MultiSendCallOnly: `${safeContracts}/libraries/MultiSendCallOnly.sol/MultiSendCallOnly.json`,
  CompatibilityFallbackHandler: `${safeContracts}/handler/CompatibilityFallbackHandler.sol/CompatibilityFallbackHandler.json`,
  Safe4337Module: `${safe4337}/Safe4337Module.sol/Safe4337Module.json`,
  SafeModuleSetup: `${safe4337}/SafeModuleSetup.sol/SafeModuleSetup.json`
}

const HexString = Schema.String.check(Schema.isPattern(/^0x(?:[0-9a-fA-F]{2})*$/))

/** The part of a Hardhat artifact we read: creation bytecode without unlinked libraries. */
const HardhatArtifact = Schema.Struct({
  contractName: Schema.String,
  bytecode: HexString,
  linkReferences: Schema.Record(Schema.String, Schema.Unknown)
})

const packageRequire = createRequire(import.meta.url)
const creationCodes = new Map<PackagedContract, Hex>()

/** Parses a JSON file of an installed package; throws a defect naming the package when it is missing or malformed. */
const readPackageJson = (path: string): unknown => {
  try {
    return JSON.parse(readFileSync(packageRequire.resolve(path), "utf8"))
  } catch (cause) {
    throw new Error(`cannot read ${path}: is its package installed?`, { cause })
  }
}

/** The creation bytecode of `contract` from its npm package (read once per process). */
export const creationCode = (contract: PackagedContract): Hex => {
  const known = creationCodes.get(contract)
  if (known !== undefined) return known
  const artifact = Schema.decodeUnknownSync(HardhatArtifact)(readPackageJson(artifactPaths[contract]))
  if (artifact.contractName !== contract || Object.keys(artifact.linkReferences).length > 0) {
    throw new Error(`${artifactPaths[contract]} is not the unlinked ${contract} artifact`)
  }
  const code = artifact.bytecode as Hex
  creationCodes.set(contract, code)
  return code
}

/** The Safe singleton factory's presigned deployment for one chain (`@safe-global/safe-singleton-factory`). */
export interface SingletonFactoryDeployment {
  /** The factory's address, the same on every chain that has a presigned deployment. */
  readonly address: Address
  /** The one-time key's address that signed `transaction`: fund it with `gasPrice × gasLimit` first. */
  readonly signer: Address
  readonly gasPrice: bigint
  readonly gasLimit: bigint
  /** The raw presigned (EIP-155) transaction. */
  readonly transaction: Hex
}

const PresignedDeployment = Schema.Struct({
  gasPrice: Schema.Number,
  gasLimit: Schema.Number,
  signerAddress: HexString,
  transaction: HexString,
  address: HexString
})

/** The presigned deployment of the Safe singleton factory for `chainId`, or undefined if the package has none. */
export const singletonFactoryDeployment = (chainId: number): SingletonFactoryDeployment | undefined => {
  let json: unknown
  try {
    json = JSON.parse(
      readFileSync(
        packageRequire.resolve(`@safe-global/safe-singleton-factory/artifacts/${chainId}/deployment.json`),
        "utf8"
      )
    )
  } catch {
    return undefined
  }
  const deployment = Schema.decodeUnknownSync(PresignedDeployment)(json)
  return {
    address: getAddress(deployment.address),
    signer: getAddress(deployment.signerAddress),
    gasPrice: BigInt(deployment.gasPrice),
    gasLimit: BigInt(deployment.gasLimit),
    transaction: deployment.transaction as Hex
  }
}

/** The address of the Safe singleton factory (the same on every chain with a presigned deployment). */
export const singletonFactoryAddress: Address = "0x914d7Fec6aaC8cd542e72Bca78B30650d45643d7"

/** The deterministic CREATE2 deployer (Arachnid's), which anvil predeploys and most chains have. */
export const deterministicDeployerAddress: Address = "0x4e59b44847b379578588920cA78FbF26c0B4956C"

/** Salt under which EntryPoint v0.7 was deployed through {@link deterministicDeployerAddress} (eth-infinitism). */
export const entryPoint07Salt: Hash = "0x90d8084deab30c2a37c45e8d47f49f2f7965183cb6990a98943ef94940681de3"

/** A contract's canonical address and, where `@safe-global/safe-deployments` publishes it, its runtime code hash. */
interface CanonicalContract {
  readonly address: Address
  /** keccak256 of the runtime code, as published; undefined where the registry has none. */
  readonly codeHash: Hash | undefined
}

/** The canonical contracts of Safe 1.4.1 + Safe4337Module 0.3.0 on EntryPoint v0.7, from the registries. */
export interface CanonicalSafe4337 {
  readonly entryPoint: CanonicalContract
  readonly safe: CanonicalContract
  readonly safeL2: CanonicalContract
  readonly safeProxyFactory: CanonicalContract
  readonly multiSend: CanonicalContract
  readonly multiSendCallOnly: CanonicalContract
  readonly compatibilityFallbackHandler: CanonicalContract
  readonly safe4337Module: CanonicalContract
  readonly safeModuleSetup: CanonicalContract
}

const fromSafeDeployments = (name: string, deployment: SingletonDeployment | undefined): CanonicalContract => {
  const canonical = deployment?.deployments.canonical
  if (canonical === undefined) throw new Error(`@safe-global/safe-deployments has no canonical ${name} 1.4.1`)
  return { address: getAddress(canonical.address), codeHash: canonical.codeHash as Hash }
}

/** Modules are deployed at one address on every chain; the registry lists it per chain (mainnet's is canonical). */
const fromModulesDeployments = (
  name: string,
  deployment: { readonly networkAddresses: Record<string, string> } | undefined
): CanonicalContract => {
  const address = deployment?.networkAddresses["1"]
  if (address === undefined) throw new Error(`@safe-global/safe-modules-deployments has no ${name} 0.3.0`)
  return { address: getAddress(address), codeHash: undefined }
}

let canonical: CanonicalSafe4337 | undefined

/** The canonical Safe 1.4.1 / Safe4337Module 0.3.0 / EntryPoint v0.7 addresses and code hashes (read once). */
export const canonicalSafe4337 = (): CanonicalSafe4337 => {
  const safe141 = { version: "1.4.1", released: true } as const
  const module030 = { version: "0.3.0", released: true } as const
  canonical ??= {
    entryPoint: { address: entryPoint07Address, codeHash: undefined },
    safe: fromSafeDeployments("Safe", getSafeSingletonDeployment(safe141)),
    safeL2: fromSafeDeployments("SafeL2", getSafeL2SingletonDeployment(safe141)),
    safeProxyFactory: fromSafeDeployments("SafeProxyFactory", getProxyFactoryDeployment(safe141)),
    multiSend: fromSafeDeployments("MultiSend", getMultiSendDeployment(safe141)),
    multiSendCallOnly: fromSafeDeployments("MultiSendCallOnly", getMultiSendCallOnlyDeployment(safe141)),
    compatibilityFallbackHandler: fromSafeDeployments(
      "CompatibilityFallbackHandler",
      getCompatibilityFallbackHandlerDeployment(safe141)
    ),
    safe4337Module: fromModulesDeployments("Safe4337Module", getSafe4337ModuleDeployment(module030)),
    safeModuleSetup: fromModulesDeployments("SafeModuleSetup", getSafeModuleSetupDeployment(module030))
  }
  return canonical
}
