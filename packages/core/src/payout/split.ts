import { type Address, encodePacked, getAddress, keccak256 } from "viem"
import { NATIVE_ASSET, type PayoutPlan } from "./accounts"

/** How one transfer is paid: the native coin as a call's value, or an ERC-20's `transfer`. */
export type TransferKind = "native" | "token"

/** How a transfer of `asset` is paid. */
export const transferKind = (transfer: { readonly asset: string }): TransferKind =>
  getAddress(transfer.asset) === NATIVE_ASSET ? "native" : "token"

/**
 * The gas one transfer is counted for when a payout is split, whatever its recipient: a native transfer to an
 * account that does not exist yet (25,000 to create it, 9,000 for the value, the cold access, MultiSend's loop) and an
 * ERC-20 `transfer` writing a new balance slot, each with room to spare. A recipient that needs more (a contract whose
 * `receive` does work, a token with hooks) makes its part's gas larger than counted: that part is refused by the
 * ceiling (`gas_ceiling_exceeded`), the others are not.
 */
export const TRANSFER_GAS: { readonly [K in TransferKind]: number } = { native: 40_000, token: 70_000 }

/**
 * The gas of one operation besides its transfers: the Safe's validation and execution, the EntryPoint, the
 * paymaster, pre-verification and the deployment of a Safe not deployed yet (the first part's).
 */
export const OPERATION_OVERHEAD_GAS = 500_000

/**
 * The call gas of a part besides its transfers' counted gas: the Safe's module path around the batch
 * (Safe4337Module → `execTransactionFromModule` → MultiSendCallOnly, and the SafeL2's event that logs the batch, about
 * 1,000 gas a transfer: 116,814 gas outside MultiSend around 87 transfers on the devnet) and what the five nested calls
 * keep back (each passes at most 63/64 of its gas on: the MultiSend loop gets about 92 % of the call gas).
 */
export const PART_CALL_OVERHEAD_GAS = 100_000

/**
 * The least call gas a part is signed with (`callGasLimit`), whatever the bundler estimated: its transfers' counted
 * gas ({@link TRANSFER_GAS}: a cold recipient that does not exist yet) and {@link PART_CALL_OVERHEAD_GAS}. A bundler
 * estimates the calls after simulating the operations pending in its mempool that it deems related (alto: every one
 * with the same paymaster, so the payout's earlier parts), with no margin: an estimate taken after an earlier part
 * warmed the Safe's shared state, or created or warmed a recipient, falls short when the part executes before it.
 * Within the ceiling: the split counts each part at most {@link CEILING_FILL} of it, less {@link OPERATION_OVERHEAD_GAS}.
 */
export const partCallGasFloor = (kinds: ReadonlyArray<TransferKind>): bigint =>
  BigInt(kinds.reduce((sum, kind) => sum + TRANSFER_GAS[kind], PART_CALL_OVERHEAD_GAS))

/** The share of the network's per-operation ceiling a part is filled to: the bundler's estimates carry margins. */
export const CEILING_FILL = 0.8

/** The most operations one payout is split into: a request sends them one after the other. */
export const MAX_PARTS = 100

/** One operation of a payout: the transfers `from` (inclusive) up to `to` (exclusive), in the request's order. */
export interface PartRange {
  readonly from: number
  readonly to: number
}

/** How a payout is split, or that it would take more than {@link MAX_PARTS} operations. */
export type Split =
  | { readonly _tag: "Parts"; readonly parts: ReadonlyArray<PartRange> }
  /** More than {@link MAX_PARTS} operations would be needed (`parts` of them at least). */
  | { readonly _tag: "TooManyParts"; readonly parts: number }

/**
 * Splits a payout's transfers (their kinds, in the request's order) into operations of consecutive transfers, each
 * counted at most {@link CEILING_FILL} of `ceiling`, greedily in order. A pure function of the kinds and the ceiling:
 * the same request always gives the same operations in the same order, every transfer in exactly one of them. A
 * ceiling too low for one counted transfer leaves the payout whole: its operation's own gas, estimated, is then checked
 * against the ceiling, as for any payout.
 */
export const splitPayout = (kinds: ReadonlyArray<TransferKind>, ceiling: number): Split => {
  const budget = Math.floor(ceiling * CEILING_FILL) - OPERATION_OVERHEAD_GAS
  if (kinds.some((kind) => TRANSFER_GAS[kind] > budget)) {
    return { _tag: "Parts", parts: kinds.length === 0 ? [] : [{ from: 0, to: kinds.length }] }
  }
  const parts: Array<PartRange> = []
  let from = 0
  let used = 0
  for (const [index, kind] of kinds.entries()) {
    if (used + TRANSFER_GAS[kind] > budget) {
      parts.push({ from, to: index })
      if (parts.length >= MAX_PARTS) return { _tag: "TooManyParts", parts: parts.length + 1 }
      from = index
      used = 0
    }
    used += TRANSFER_GAS[kind]
  }
  if (from < kinds.length) parts.push({ from, to: kinds.length })
  return { _tag: "Parts", parts }
}

/**
 * The EntryPoint nonce key of part `index` of payout `payoutId`: the top 192 bits of
 * `keccak256("walletgate/payout-part/v1", payoutId, index)`. Each part has its own key, used at sequence 0: signed
 * again after a crash (same key, same sequence), it can still execute only once, and no part waits on another.
 */
export const partNonceKey = (payoutId: string, index: number): bigint =>
  BigInt(keccak256(encodePacked(["string", "string", "uint32"], ["walletgate/payout-part/v1", payoutId, index]))) >> 64n

/**
 * The EntryPoint nonce key of part `index` (≥ 1) of the plan payout of `account` on plan turn `turn` (the sequence its
 * part 0 takes on the account's plan payout nonce key): the top 192 bits of
 * `keccak256("walletgate/plan-payout-part/v1", account, turn, index)`, used at sequence 0. Every request of the same
 * turn derives the same keys, so the EntryPoint executes each part of a turn at most once, whoever signed it.
 */
export const planPartNonceKey = (account: Address, turn: bigint, index: number): bigint =>
  BigInt(
    keccak256(
      encodePacked(["string", "address", "uint256", "uint32"], ["walletgate/plan-payout-part/v1", account, turn, index])
    )
  ) >> 64n

/**
 * The parts of a plan payout that needs several operations, by recipient (each paid one transfer of the plan's asset);
 * undefined for a plan that fits one operation, or that would need more than {@link MAX_PARTS} (it stays one
 * operation, refused by the ceiling).
 */
export const splitPlan = (plan: PayoutPlan, ceiling: number): ReadonlyArray<PartRange> | undefined => {
  const kind = transferKind(plan)
  const split = splitPayout(
    plan.recipients.map(() => kind),
    ceiling
  )
  return split._tag === "Parts" && split.parts.length > 1 ? split.parts : undefined
}
