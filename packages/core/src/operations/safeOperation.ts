import * as Effect from "effect/Effect"
import { type Address, type Hash, type LocalAccount, size } from "viem"
import { getUserOperationHash } from "viem/account-abstraction"
import type { NetworkReads } from "../chain/networkClient"
import type { Erc4337Settings, Network } from "../chain/networks"
import { Bundler, type BundlerError, type UserOperation07 } from "./Bundler"
import {
  type PaymasterServiceClient,
  type PaymasterServiceError,
  type PaymasterStub,
  paymasterServiceClient
} from "./paymasterService"
import { canonicalSafe4337Contracts, type SafeAccount, type SafeCall, safeBatchCallData } from "./safeAccount"
import {
  paymasterAndDataOf,
  type SafeOperationFields,
  type SafeOperationValidity,
  safeOperationStubSignature,
  signSafeOperation
} from "./safeSignature"
import {
  type PaymasterFields,
  type SponsorshipWindow,
  sponsorWithVerifyingPaymaster,
  verifyingPaymasterStub,
  verifyingPaymasterValidationGas
} from "./verifyingPaymaster"

/**
 * A random 192-bit EntryPoint nonce key. Each operation takes its own key, so operations of one account never
 * wait for or collide with each other, and no nonce is kept anywhere: a fresh key's sequence is 0.
 */
export const randomNonceKey = (): bigint => {
  const bytes = crypto.getRandomValues(new Uint8Array(24))
  return BigInt(`0x${Buffer.from(bytes).toString("hex")}`)
}

/** The EntryPoint nonce of sequence `sequence` on `key`: key (192 bits) ‖ sequence (64 bits). */
export const nonceOfKey = (key: bigint, sequence = 0n): bigint => {
  if (key < 0n || key >= 1n << 192n || sequence < 0n || sequence >= 1n << 64n) throw new Error("nonce out of range")
  return (key << 64n) | sequence
}

/** EIP-1559 fees of an operation. */
export interface OperationFees {
  readonly maxFeePerGas: bigint
  readonly maxPriorityFeePerGas: bigint
}

/** What the node says about an account before an operation, read in one round trip (three requests at once). */
export interface AccountChainState {
  readonly deployed: boolean
  /** Twice the latest base fee plus the node's suggested priority fee. */
  readonly fees: OperationFees
  /** The latest block's base fee. */
  readonly baseFeePerGas: bigint
  /** The latest block's number: an operation prepared now is included after it. */
  readonly blockNumber: bigint
}

/**
 * `fees` lowered to the network's caps (`NetworkConfig.erc4337.feeCaps`), or undefined while the base fee plus the
 * (capped) priority fee is above the cap: such an operation could not be included now.
 */
export const capFees = (
  fees: OperationFees,
  baseFeePerGas: bigint,
  caps: { readonly maxFeePerGas?: bigint; readonly maxPriorityFeePerGas?: bigint }
): OperationFees | undefined => {
  const min = (a: bigint, b: bigint | undefined) => (b !== undefined && b < a ? b : a)
  const maxPriorityFeePerGas = min(fees.maxPriorityFeePerGas, caps.maxPriorityFeePerGas)
  const maxFeePerGas = min(fees.maxFeePerGas, caps.maxFeePerGas)
  if (maxFeePerGas < baseFeePerGas + maxPriorityFeePerGas) return undefined
  return { maxFeePerGas, maxPriorityFeePerGas }
}

/** Reads, concurrently, whether `address` has code and the fees to offer (latest block and priority fee). */
export const readAccountChainState = async (
  client: Pick<NetworkReads, "getCode" | "getBlock" | "estimateMaxPriorityFeePerGas">,
  address: Address
): Promise<AccountChainState> => {
  const [code, block, priority] = await Promise.all([
    client.getCode({ address }),
    client.getBlock({ blockTag: "latest" }),
    client.estimateMaxPriorityFeePerGas()
  ])
  const baseFee = block.baseFeePerGas ?? 0n
  return {
    deployed: code !== undefined && code !== "0x",
    fees: { maxFeePerGas: baseFee * 2n + priority, maxPriorityFeePerGas: priority },
    baseFeePerGas: baseFee,
    blockNumber: block.number
  }
}

/** Gas limits of an operation, set by the caller (no estimation round trip). */
interface OperationGasLimits {
  readonly callGasLimit: bigint
  readonly verificationGasLimit: bigint
  readonly preVerificationGas: bigint
  /** The paymaster's validation gas; {@link verifyingPaymasterValidationGas} when absent. */
  readonly paymasterVerificationGasLimit?: bigint
}

/** How an operation's gas limits are found. */
export type GasSource =
  /** The bundler estimates the operation as sent (with a placeholder sponsorship); if it refuses, as self-paid. */
  | { readonly kind: "estimate" }
  /** The bundler estimates the operation as if self-paid; the paymaster's share is added by hand (docs/decisions.md). */
  | { readonly kind: "self-paid estimate" }
  /** The caller's limits, as they are. */
  | { readonly kind: "given"; readonly limits: OperationGasLimits }

/** A VerifyingPaymaster sponsorship signed by the gateway's paymaster signer. */
interface VerifyingPaymasterSponsor {
  readonly paymaster: Address
  readonly signer: LocalAccount
  readonly window: SponsorshipWindow
}

/** A sponsorship asked of an ERC-7677 paymaster service: stub data before the estimate, final data after approval. */
interface PaymasterServiceSponsor {
  readonly service: PaymasterServiceClient
}

/** Who sponsors an operation: the gateway's own VerifyingPaymaster signer, or a paymaster service. */
export type OperationSponsor = VerifyingPaymasterSponsor | PaymasterServiceSponsor

/** What {@link prepareSafeOperation} needs. */
export interface PrepareSafeOperation {
  readonly chainId: number
  readonly account: SafeAccount
  readonly calls: ReadonlyArray<SafeCall>
  /** Whether the Safe has code; when false the operation deploys it (send such an operation alone: AA10). */
  readonly deployed: boolean
  readonly fees: OperationFees
  /** The owners who sign (at least the Safe's threshold). */
  readonly signers: ReadonlyArray<LocalAccount>
  /** Sponsorship; the Safe pays its own gas when absent. */
  readonly sponsor?: OperationSponsor
  /** A fresh random key ({@link randomNonceKey}) when absent. */
  readonly nonceKey?: bigint
  /** The sequence on `nonceKey`; 0 (a fresh key's first) when absent. */
  readonly nonceSequence?: bigint
  readonly validity?: SafeOperationValidity
  /** `{ kind: "estimate" }` when absent. */
  readonly gas?: GasSource
  /**
   * The least call gas the operation is signed with, whatever the estimate: the caller's own count of what its calls
   * can need (a payout part: recipients cold and not existing yet). A bundler's estimate is the least gas the calls
   * needed in the state it simulated, which may be warmer (EIP-2929) than the one they execute in.
   */
  readonly callGasFloor?: bigint
}

/**
 * The most gas an operation can be charged for: its call, verification and pre-verification gas, and the
 * paymaster's validation and post-operation gas. What a spend policy reserves before the operation is sponsored.
 */
const operationGasCeiling = (op: SafeOperationFields): bigint =>
  op.callGasLimit +
  op.verificationGasLimit +
  op.preVerificationGas +
  (op.paymasterVerificationGasLimit ?? 0n) +
  (op.paymasterPostOpGasLimit ?? 0n)

/** A signed operation and its hash: what is recorded before it is sent, and re-sent as it is. */
export interface PreparedSafeOperation {
  readonly op: UserOperation07
  readonly hash: Hash
  /** Which estimate gave the gas limits. */
  readonly gasFrom: "bundler" | "self-paid estimate" | "given"
}

/** The balance a self-paid estimate pretends the Safe has (1,000 ETH): enough for any prefund. */
const selfPaidEstimateBalance = 10n ** 21n

/** Calldata gas per non-zero byte (EIP-2028), paid for the `paymasterAndData` a self-paid estimate did not see. */
const calldataGasPerByte = 16n

/**
 * Builds, estimates, sponsors and signs a Safe operation running `calls` atomically. Round trips: one
 * (`eth_estimateUserOperationGas`) with the default gas source, two when the bundler refuses the sponsored
 * estimate (alto 0.0.20's "AA30 paymaster not deployed"), none with given limits; nothing is sent. A paymaster service
 * is asked twice besides: for stub data before the estimate and, once `approveGas` passed, for the final data (once
 * only when its stub is final).
 */
export const prepareSafeOperation = <E = never, R = never>(
  input: PrepareSafeOperation & {
    /**
     * Called once the gas limits are known, before anything is sponsored or signed, with the operation's
     * {@link operationGasCeiling}: a failure (a spend policy's refusal) ends the preparation with nothing signed.
     */
    readonly approveGas?: (gas: bigint) => Effect.Effect<void, E, R>
  }
): Effect.Effect<PreparedSafeOperation, BundlerError | PaymasterServiceError | E, Bundler | R> =>
  Effect.gen(function* () {
    const bundler = yield* Bundler
    const entryPoint = input.account.contracts.entryPoint
    const base: SafeOperationFields = {
      sender: input.account.address,
      nonce: nonceOfKey(input.nonceKey ?? randomNonceKey(), input.nonceSequence ?? 0n),
      ...(input.deployed ? {} : { factory: input.account.factory, factoryData: input.account.factoryData }),
      callData: safeBatchCallData(input.account, input.calls),
      callGasLimit: 0n,
      verificationGasLimit: 0n,
      preVerificationGas: 0n,
      ...input.fees
    }
    const stub = (fields: SafeOperationFields): UserOperation07 => ({
      ...fields,
      signature: safeOperationStubSignature(input.account)
    })
    const sponsor = input.sponsor
    // A service is asked for its stub before anything is estimated: a refusal ends here with nothing estimated.
    const serviceStub: PaymasterStub | undefined =
      sponsor !== undefined && "service" in sponsor ? yield* sponsor.service.stubData(base) : undefined
    const sponsorStub: PaymasterFields | undefined =
      sponsor === undefined
        ? undefined
        : "service" in sponsor
          ? serviceStub?.fields
          : verifyingPaymasterStub(sponsor.paymaster, sponsor.window)
    /** The paymaster's validation gas: the service's when it named it, else the estimate's, else the default. */
    const paymasterValidationGas = (estimated: bigint | undefined) =>
      serviceStub?.verificationGasGiven === true
        ? serviceStub.fields.paymasterVerificationGasLimit
        : (estimated ?? verifyingPaymasterValidationGas)

    const selfPaidEstimate = Effect.gen(function* () {
      // As if the Safe could pay: a sponsored Safe holds no ETH.
      const gas = yield* bundler.estimateUserOperationGas(input.chainId, stub(base), entryPoint, {
        senderBalanceWei: selfPaidEstimateBalance
      })
      // The sponsored operation carries `paymasterAndData`, which the self-paid one did not: pay for its bytes.
      const extraBytes = sponsorStub === undefined ? 0n : BigInt(size(paymasterAndDataOf({ ...base, ...sponsorStub })))
      return {
        limits: {
          callGasLimit: gas.callGasLimit,
          verificationGasLimit: gas.verificationGasLimit,
          preVerificationGas: gas.preVerificationGas + extraBytes * calldataGasPerByte,
          paymasterVerificationGasLimit: paymasterValidationGas(undefined)
        },
        gasFrom: "self-paid estimate" as const
      }
    })

    const source = input.gas ?? { kind: "estimate" }
    const { limits, gasFrom } = yield* Effect.gen(function* () {
      if (source.kind === "given") return { limits: source.limits, gasFrom: "given" as const }
      if (sponsorStub === undefined) {
        const gas = yield* bundler.estimateUserOperationGas(input.chainId, stub(base), entryPoint)
        return { limits: gas, gasFrom: "bundler" as const }
      }
      if (source.kind === "self-paid estimate") return yield* selfPaidEstimate
      return yield* bundler.estimateUserOperationGas(input.chainId, stub({ ...base, ...sponsorStub }), entryPoint).pipe(
        Effect.map((gas) => ({
          limits: {
            ...gas,
            paymasterVerificationGasLimit: paymasterValidationGas(gas.paymasterVerificationGasLimit)
          },
          gasFrom: "bundler" as const
        })),
        // alto 0.0.20 sometimes refuses a sponsored estimate ("AA30 paymaster not deployed") although the
        // paymaster is deployed: estimate the same calls self-paid instead.
        Effect.catchTags({ BundlerRejected: () => selfPaidEstimate, BundlerRefusedSetup: () => selfPaidEstimate })
      )
    })

    const floor = input.callGasFloor ?? 0n
    const withGas: SafeOperationFields = {
      ...base,
      callGasLimit: limits.callGasLimit > floor ? limits.callGasLimit : floor,
      verificationGasLimit: limits.verificationGasLimit,
      preVerificationGas: limits.preVerificationGas
    }
    const paymasterGas =
      sponsorStub === undefined
        ? undefined
        : {
            paymasterVerificationGasLimit: limits.paymasterVerificationGasLimit ?? paymasterValidationGas(undefined),
            paymasterPostOpGasLimit: sponsorStub.paymasterPostOpGasLimit
          }
    // The spend policy's reservation, before the final sponsorship is asked for or signed.
    if (input.approveGas !== undefined) yield* input.approveGas(operationGasCeiling({ ...withGas, ...paymasterGas }))
    const sponsorship: PaymasterFields | undefined =
      sponsor === undefined || sponsorStub === undefined || paymasterGas === undefined
        ? undefined
        : "service" in sponsor
          ? serviceStub?.isFinal === true
            ? { ...sponsorStub, ...paymasterGas }
            : yield* sponsor.service.finalData(withGas, { ...sponsorStub, ...paymasterGas })
          : yield* Effect.promise(() =>
              sponsorWithVerifyingPaymaster(withGas, {
                paymaster: sponsor.paymaster,
                signer: sponsor.signer,
                chainId: input.chainId,
                window: sponsor.window,
                paymasterVerificationGasLimit: paymasterGas.paymasterVerificationGasLimit
              })
            )
    const sponsored: SafeOperationFields = sponsorship === undefined ? withGas : { ...withGas, ...sponsorship }
    const signature = yield* Effect.promise(() =>
      signSafeOperation(input.account, sponsored, {
        chainId: input.chainId,
        signers: input.signers,
        ...(input.validity === undefined ? {} : { validity: input.validity })
      })
    )
    const op: UserOperation07 = { ...sponsored, signature }
    const hash = getUserOperationHash({
      chainId: input.chainId,
      entryPointAddress: entryPoint,
      entryPointVersion: "0.7",
      userOperation: op
    })
    return { op, hash, gasFrom }
  })

/** Who sponsors the network's operations: its VerifyingPaymaster signer, its ERC-7677 service, or nobody. */
export const sponsorOf = (network: Network, sponsor: Erc4337Settings["sponsor"]): OperationSponsor | undefined => {
  if (sponsor === undefined) return undefined
  if (sponsor.kind === "service") {
    return { service: paymasterServiceClient(network, canonicalSafe4337Contracts().entryPoint, sponsor.service) }
  }
  return { paymaster: sponsor.paymaster, signer: sponsor.signer, window: { validUntil: 0, validAfter: 0 } }
}
