import { type Address, concat, encodeAbiParameters, getAddress, type Hash, type Hex, keccak256, zeroHash } from "viem"
import { verifyingPaymasterAbi } from "../operations/verifyingPaymaster"
import { canonicalSafe4337, creationCode } from "./contractPackages"
import type { ChainReader } from "./deployment"

// Whether a network's ERC-4337 contracts and the operator's paymaster hold the code walletgate expects (`walletgate doctor`).

/** One contract's check: is the code at its address the canonical code? */
export interface CodeCheck {
  readonly contract: string
  readonly address: Address
  /** keccak256 of the code at the address (the empty code's hash when there is none). */
  readonly codeHash: Hash
  /** The hash it must have (none for the EntryPoint: see {@link checkErc4337Code}), and where that comes from. */
  readonly expectedCodeHash: Hash | undefined
  readonly source: "safe-deployments" | "package init code" | "CREATE2 address"
  readonly ok: boolean
}

const simulatedRuntimeCode = async (reader: ChainReader, initCode: Hex, from?: Address): Promise<Hex> => {
  // A call without `to` runs the init code and returns the runtime code it would deploy.
  const { data } = await reader.call({ data: initCode, ...(from === undefined ? {} : { account: from }) })
  return data ?? "0x"
}

/**
 * Checks the code at every canonical address (doctor's table): the Safe contracts against the code hashes
 * published by `@safe-global/safe-deployments`; the Safe4337Module and SafeModuleSetup (whose registry publishes no
 * hash) against their package's init code run in an `eth_call`. The EntryPoint's runtime code embeds an address
 * made in its constructor, so it is checked by its CREATE2 address alone (done before any deployment).
 */
export const checkErc4337Code = async (reader: ChainReader): Promise<ReadonlyArray<CodeCheck>> => {
  const canonical = canonicalSafe4337()
  const codeHashAt = async (address: Address): Promise<Hash> => keccak256((await reader.getCode({ address })) ?? "0x")
  const published: ReadonlyArray<[string, { readonly address: Address; readonly codeHash: Hash | undefined }]> = [
    ["Safe", canonical.safe],
    ["SafeL2", canonical.safeL2],
    ["SafeProxyFactory", canonical.safeProxyFactory],
    ["MultiSend", canonical.multiSend],
    ["MultiSendCallOnly", canonical.multiSendCallOnly],
    ["CompatibilityFallbackHandler", canonical.compatibilityFallbackHandler]
  ]
  const checks = await Promise.all(
    published.map(async ([contract, { address, codeHash }]): Promise<CodeCheck> => {
      const actual = await codeHashAt(address)
      const expected = codeHash ?? zeroHash
      return {
        contract,
        address,
        codeHash: actual,
        expectedCodeHash: expected,
        source: "safe-deployments",
        ok: actual === expected
      }
    })
  )
  const fromPackages: ReadonlyArray<[string, Address, Hex]> = [
    [
      "Safe4337Module",
      canonical.safe4337Module.address,
      concat([
        creationCode("Safe4337Module"),
        encodeAbiParameters([{ type: "address" }], [canonical.entryPoint.address])
      ])
    ],
    ["SafeModuleSetup", canonical.safeModuleSetup.address, creationCode("SafeModuleSetup")]
  ]
  const moduleChecks = await Promise.all(
    fromPackages.map(async ([contract, address, initCode]): Promise<CodeCheck> => {
      const [actual, runtime] = await Promise.all([codeHashAt(address), simulatedRuntimeCode(reader, initCode)])
      const expected = keccak256(runtime)
      return {
        contract,
        address,
        codeHash: actual,
        expectedCodeHash: expected,
        source: "package init code",
        ok: actual === expected && runtime !== "0x"
      }
    })
  )
  const entryPointHash = await codeHashAt(canonical.entryPoint.address)
  const entryPoint: CodeCheck = {
    contract: "EntryPoint",
    address: canonical.entryPoint.address,
    codeHash: entryPointHash,
    expectedCodeHash: undefined,
    source: "CREATE2 address",
    ok: entryPointHash !== keccak256("0x")
  }
  return [entryPoint, ...checks, ...moduleChecks]
}

/**
 * Checks the operator's paymaster at `address` (doctor's table): its code is the package's VerifyingPaymaster built
 * for this EntryPoint and `signer` (its runtime code, with both immutable, from the package's init code run in an
 * `eth_call`), and it signs with `signer`. Undefined when it is sound, else what is wrong.
 */
export const checkVerifyingPaymaster = async (
  reader: ChainReader,
  address: Address,
  expected: { readonly entryPoint: Address; readonly signer: Address }
): Promise<string | undefined> => {
  const code = (await reader.getCode({ address })) ?? "0x"
  if (code === "0x") return `no code at ${address}`
  const runtime = await simulatedRuntimeCode(
    reader,
    concat([
      creationCode("VerifyingPaymaster"),
      encodeAbiParameters([{ type: "address" }, { type: "address" }], [expected.entryPoint, expected.signer])
    ]),
    // Any sender but address 0 (`Ownable` refuses it); the owner is kept in storage, not in the code.
    address
  )
  if (keccak256(code) !== keccak256(runtime)) {
    return `the code at ${address} is not a VerifyingPaymaster of EntryPoint ${expected.entryPoint} signed by ${expected.signer}`
  }
  const signer = await reader.readContract({ address, abi: verifyingPaymasterAbi, functionName: "verifyingSigner" })
  return getAddress(signer) === getAddress(expected.signer)
    ? undefined
    : `${address} is signed for by ${signer}, not ${expected.signer}`
}
