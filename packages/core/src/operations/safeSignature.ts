import {
  type Address,
  concat,
  encodePacked,
  getAddress,
  type Hash,
  type Hex,
  type LocalAccount,
  serializeErc6492Signature,
  type TypedDataDefinition
} from "viem"
import { compareAddresses, type SafeAccount } from "./safeAccount"

// What a Safe owner signs: a user operation (Safe4337Module's `SafeOp`), a hash, a message or typed data.

/** Safe4337Module 0.3.0's EIP-712 `SafeOp` (domain: chain id and the module's address). */
const safeOperationTypes = {
  SafeOp: [
    { name: "safe", type: "address" },
    { name: "nonce", type: "uint256" },
    { name: "initCode", type: "bytes" },
    { name: "callData", type: "bytes" },
    { name: "verificationGasLimit", type: "uint128" },
    { name: "callGasLimit", type: "uint128" },
    { name: "preVerificationGas", type: "uint256" },
    { name: "maxPriorityFeePerGas", type: "uint128" },
    { name: "maxFeePerGas", type: "uint128" },
    { name: "paymasterAndData", type: "bytes" },
    { name: "validAfter", type: "uint48" },
    { name: "validUntil", type: "uint48" },
    { name: "entryPoint", type: "address" }
  ]
} as const

/** The fields of a v0.7 user operation that a Safe owner signs (all but the signature). */
export interface SafeOperationFields {
  readonly sender: Address
  readonly nonce: bigint
  readonly factory?: Address | undefined
  readonly factoryData?: Hex | undefined
  readonly callData: Hex
  readonly callGasLimit: bigint
  readonly verificationGasLimit: bigint
  readonly preVerificationGas: bigint
  readonly maxFeePerGas: bigint
  readonly maxPriorityFeePerGas: bigint
  readonly paymaster?: Address | undefined
  readonly paymasterVerificationGasLimit?: bigint | undefined
  readonly paymasterPostOpGasLimit?: bigint | undefined
  readonly paymasterData?: Hex | undefined
}

/** When a Safe operation is valid, in unix seconds; 0 means "from always" / "for ever". */
export interface SafeOperationValidity {
  readonly validAfter: number
  readonly validUntil: number
}

/** `initCode` of a v0.7 operation: factory ‖ factoryData, or empty. */
export const initCodeOf = (op: SafeOperationFields): Hex =>
  op.factory === undefined ? "0x" : concat([op.factory, op.factoryData ?? "0x"])

/** `paymasterAndData` of a v0.7 operation: paymaster ‖ uint128 verification gas ‖ uint128 postOp gas ‖ data. */
export const paymasterAndDataOf = (op: SafeOperationFields): Hex =>
  op.paymaster === undefined
    ? "0x"
    : encodePacked(
        ["address", "uint128", "uint128", "bytes"],
        [
          op.paymaster,
          op.paymasterVerificationGasLimit ?? 0n,
          op.paymasterPostOpGasLimit ?? 0n,
          op.paymasterData ?? "0x"
        ]
      )

/** The EIP-712 `SafeOp` an owner signs for `op` on `chainId`. */
const safeOperationTypedData = (
  account: SafeAccount,
  op: SafeOperationFields,
  chainId: number,
  validity: SafeOperationValidity
): TypedDataDefinition<typeof safeOperationTypes, "SafeOp"> => ({
  domain: { chainId, verifyingContract: account.contracts.safe4337Module },
  types: safeOperationTypes,
  primaryType: "SafeOp",
  message: {
    safe: op.sender,
    nonce: op.nonce,
    initCode: initCodeOf(op),
    callData: op.callData,
    verificationGasLimit: op.verificationGasLimit,
    callGasLimit: op.callGasLimit,
    preVerificationGas: op.preVerificationGas,
    maxPriorityFeePerGas: op.maxPriorityFeePerGas,
    maxFeePerGas: op.maxFeePerGas,
    paymasterAndData: paymasterAndDataOf(op),
    validAfter: validity.validAfter,
    validUntil: validity.validUntil,
    entryPoint: account.contracts.entryPoint
  }
})

/** Owner signatures in the order Safe's `checkSignatures` demands: by ascending owner address. */
const orderedSignatures = async (
  signers: ReadonlyArray<LocalAccount>,
  sign: (signer: LocalAccount) => Promise<Hex>
): Promise<Hex> => {
  const sorted = [...signers].sort((a, b) => compareAddresses(a.address, b.address))
  return concat(await Promise.all(sorted.map(sign)))
}

const checkSigners = (account: SafeAccount, signers: ReadonlyArray<LocalAccount>): void => {
  const owners = new Set(account.owners)
  const distinct = new Set(signers.map((signer) => getAddress(signer.address)))
  if (distinct.size !== signers.length || signers.some((signer) => !owners.has(getAddress(signer.address)))) {
    throw new Error("every signer must be a distinct owner of the Safe")
  }
  if (signers.length < account.threshold) throw new Error(`the Safe needs ${account.threshold} signatures`)
}

/**
 * The user operation `signature` of `op`: `validAfter ‖ validUntil ‖ owner signatures` (Safe4337Module 0.3.0),
 * signed over the `SafeOp` by at least `threshold` owners.
 */
export const signSafeOperation = async (
  account: SafeAccount,
  op: SafeOperationFields,
  options: {
    readonly chainId: number
    readonly signers: ReadonlyArray<LocalAccount>
    readonly validity?: SafeOperationValidity
  }
): Promise<Hex> => {
  checkSigners(account, options.signers)
  const validity = options.validity ?? { validAfter: 0, validUntil: 0 }
  const typedData = safeOperationTypedData(account, op, options.chainId, validity)
  const signatures = await orderedSignatures(options.signers, (signer) => signer.signTypedData(typedData))
  return encodePacked(["uint48", "uint48", "bytes"], [validity.validAfter, validity.validUntil, signatures])
}

/**
 * A well-formed placeholder `signature` for gas estimation: the validity window and `threshold` 65-byte ECDSA
 * signatures that recover to some address (a malformed one would revert where a wrong one only fails validation).
 */
export const safeOperationStubSignature = (account: SafeAccount): Hex =>
  encodePacked(
    ["uint48", "uint48", "bytes"],
    [0, 0, concat(Array.from({ length: account.threshold }, () => stubEcdsa))]
  )

/**
 * A fixed, well-formed 65-byte ECDSA signature (low s) of no meaning, for where only the shape counts: made once
 * by the throwaway key keccak256("walletgate stub key") over keccak256("walletgate stub signature").
 */
export const stubEcdsa: Hex =
  "0x4d866d64f48fe4c8bfd7c575915e241ca9a44ba51c50e23256077760dc312d8e69da182438618e7c59cd373ad1faf829e209ab4bd0dd6dc6c0b5cd117e17d1041c"

/** The EIP-712 `SafeMessage` a Safe 1.4.1 owner signs so that the Safe validates `hash` by ERC-1271. */
const safeMessageTypedData = (account: SafeAccount, hash: Hash, chainId: number) =>
  ({
    domain: { chainId, verifyingContract: account.address },
    types: { SafeMessage: [{ name: "message", type: "bytes" }] },
    primaryType: "SafeMessage",
    message: { message: hash }
  }) as const

/** Whether the Safe is deployed: decides between a bare ERC-1271 signature and an ERC-6492 wrapped one. */
export type SafeDeploymentState = "deployed" | "counterfactual"

/**
 * The Safe's signature of `hash` (ERC-1271 through the Safe's CompatibilityFallbackHandler logic in the module):
 * owners sign the `SafeMessage` of `hash`; before deployment it is wrapped by ERC-6492 with the factory call, so
 * viem's `verifyHash` / `verifyMessage` / `verifyTypedData` accept it either way.
 */
export const signSafeHash = async (
  account: SafeAccount,
  hash: Hash,
  options: {
    readonly chainId: number
    readonly signers: ReadonlyArray<LocalAccount>
    readonly state: SafeDeploymentState
  }
): Promise<Hex> => {
  checkSigners(account, options.signers)
  const typedData = safeMessageTypedData(account, hash, options.chainId)
  const signature = await orderedSignatures(options.signers, (signer) => signer.signTypedData(typedData))
  return options.state === "deployed"
    ? signature
    : serializeErc6492Signature({ address: account.factory, data: account.factoryData, signature })
}
