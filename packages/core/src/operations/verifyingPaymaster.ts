import {
  type Address,
  encodeAbiParameters,
  encodePacked,
  type Hash,
  type Hex,
  keccak256,
  type LocalAccount
} from "viem"
import { initCodeOf, type SafeOperationFields, stubEcdsa } from "./safeSignature"

/** The paymaster fields of a v0.7 user operation. */
export interface PaymasterFields {
  readonly paymaster: Address
  readonly paymasterVerificationGasLimit: bigint
  readonly paymasterPostOpGasLimit: bigint
  readonly paymasterData: Hex
}

/** When a sponsorship is valid, in unix seconds (`validUntil` 0: for ever). */
export interface SponsorshipWindow {
  readonly validUntil: number
  readonly validAfter: number
}

/**
 * The functions of the v0.7 sample VerifyingPaymaster (`@account-abstraction/contracts` 0.7.0) walletgate calls:
 * `verifyingSigner()`, `owner()`, `addStake(uint32)`, `deposit()`, `getDeposit()` (written out: no parsing at import).
 */
export const verifyingPaymasterAbi = [
  { type: "function", name: "verifyingSigner", stateMutability: "view", inputs: [], outputs: [{ type: "address" }] },
  { type: "function", name: "owner", stateMutability: "view", inputs: [], outputs: [{ type: "address" }] },
  {
    type: "function",
    name: "addStake",
    stateMutability: "payable",
    inputs: [{ type: "uint32", name: "unstakeDelaySec" }],
    outputs: []
  },
  { type: "function", name: "deposit", stateMutability: "payable", inputs: [], outputs: [] },
  { type: "function", name: "getDeposit", stateMutability: "view", inputs: [], outputs: [{ type: "uint256" }] }
] as const

/** Gas the VerifyingPaymaster's validation is given when the bundler cannot estimate it (it uses ≈ 30 k). */
export const verifyingPaymasterValidationGas = 100_000n

/**
 * The hash the paymaster's signer signs (EIP-191) for `op`: the sample VerifyingPaymaster's `getHash`, computed
 * locally. It covers every field of the operation except the paymaster data and the signature.
 */
export const verifyingPaymasterHash = (
  op: SafeOperationFields,
  sponsorship: { readonly paymaster: Address; readonly chainId: number } & SponsorshipWindow & {
      readonly paymasterVerificationGasLimit: bigint
      readonly paymasterPostOpGasLimit: bigint
    }
): Hash =>
  keccak256(
    encodeAbiParameters(
      [
        { type: "address" },
        { type: "uint256" },
        { type: "bytes32" },
        { type: "bytes32" },
        { type: "bytes32" },
        { type: "uint256" },
        { type: "uint256" },
        { type: "bytes32" },
        { type: "uint256" },
        { type: "address" },
        { type: "uint48" },
        { type: "uint48" }
      ],
      [
        op.sender,
        op.nonce,
        keccak256(initCodeOf(op)),
        keccak256(op.callData),
        encodePacked(["uint128", "uint128"], [op.verificationGasLimit, op.callGasLimit]),
        (sponsorship.paymasterVerificationGasLimit << 128n) | sponsorship.paymasterPostOpGasLimit,
        op.preVerificationGas,
        encodePacked(["uint128", "uint128"], [op.maxPriorityFeePerGas, op.maxFeePerGas]),
        BigInt(sponsorship.chainId),
        sponsorship.paymaster,
        sponsorship.validUntil,
        sponsorship.validAfter
      ]
    )
  )

const windowData = (window: SponsorshipWindow): Hex =>
  encodeAbiParameters([{ type: "uint48" }, { type: "uint48" }], [window.validUntil, window.validAfter])

/**
 * Placeholder paymaster fields for gas estimation: the real window and a well-formed dummy signature (an
 * ill-formed one makes ECDSA revert, where a wrong one only fails validation).
 */
export const verifyingPaymasterStub = (
  paymaster: Address,
  window: SponsorshipWindow,
  gas: { readonly verification: bigint } = { verification: verifyingPaymasterValidationGas }
): PaymasterFields => ({
  paymaster,
  paymasterVerificationGasLimit: gas.verification,
  paymasterPostOpGasLimit: 0n,
  paymasterData: encodePacked(["bytes", "bytes"], [windowData(window), stubEcdsa])
})

/**
 * Sponsors `op` with the VerifyingPaymaster at `paymaster`: `paymasterData` = abi.encode(validUntil, validAfter) ‖
 * the signer's EIP-191 signature of {@link verifyingPaymasterHash}. The gas limits in `op` are final: the signature
 * covers them. The caller decides before this call whether the spend policy allows the sponsorship.
 */
export const sponsorWithVerifyingPaymaster = async (
  op: SafeOperationFields,
  sponsorship: {
    readonly paymaster: Address
    readonly signer: LocalAccount
    readonly chainId: number
    readonly window: SponsorshipWindow
    readonly paymasterVerificationGasLimit: bigint
  }
): Promise<PaymasterFields> => {
  const fields = {
    paymaster: sponsorship.paymaster,
    chainId: sponsorship.chainId,
    validUntil: sponsorship.window.validUntil,
    validAfter: sponsorship.window.validAfter,
    paymasterVerificationGasLimit: sponsorship.paymasterVerificationGasLimit,
    paymasterPostOpGasLimit: 0n
  }
  const signature = await sponsorship.signer.signMessage({ message: { raw: verifyingPaymasterHash(op, fields) } })
  return {
    paymaster: sponsorship.paymaster,
    paymasterVerificationGasLimit: sponsorship.paymasterVerificationGasLimit,
    paymasterPostOpGasLimit: 0n,
    paymasterData: encodePacked(["bytes", "bytes"], [windowData(sponsorship.window), signature])
  }
}
