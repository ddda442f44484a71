import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { ChainUnavailable } from "../chain/errors"
import type { Network } from "../chain/networks"
import type { AccountIdentity } from "../operations/identity"
import type { GasPayer } from "../operations/SpendPolicy"
import type { SafeAccount } from "../operations/safeAccount"
import type { OperationNonce } from "../operations/UserOperations"
import { OutcomeUnknown } from "../state/IdempotencyStore"
import type { TxRecord } from "../state/TransactionLog"
import { PlanPayoutTaken } from "./errors"
import { mempoolFull, type PartError, type PartOutcome, type PartServices, partsNow, sendParts } from "./parts"
import { planTurnId, planTurnTaken } from "./planning"
import type { PartRange } from "./split"
import { splitPayoutView } from "./views"

// A plan payout (`{}`) larger than one operation (docs/paymagic.md, "Large payouts"): one payout per plan turn. Its
// id is derived from the turn, so every request of the turn finds the one manifest (saved by the first, under the
// turn's lock) and sends its parts, never its own. Part 0 takes the turn on the account's plan payout nonce key; the
// other parts take keys derived from the account and the turn. A turn whose part 0 was refused or left unsent was not
// taken: nothing of it stands, and the next request starts it again from the balance it reads.

/** How long one request holds a turn's lock at most (a holder that died frees it after this, on a shared store). */
const TURN_LOCK_MS = 120_000

/** A part's failure as the payout's: a bundler that did not answer is the chain's `ChainUnavailable`, as for one operation. */
export const asPayoutError = (
  network: Network,
  error: PartError
): Effect.Effect<never, Exclude<PartError, { readonly _tag: "BundlerUnavailable" }> | ChainUnavailable> =>
  error._tag === "BundlerUnavailable"
    ? Effect.fail(new ChainUnavailable({ network: network.slug, cause: `bundler: ${error.cause}` }))
    : Effect.fail(error)

/** A payout in several operations as one request read it: its account, payer, details and split. */
export interface PartsInput {
  readonly network: Network
  readonly identity: AccountIdentity
  readonly safe: SafeAccount
  readonly payer: Extract<GasPayer, { readonly kind: "payout" }>
  readonly owner: string
  readonly details: Readonly<Record<string, unknown>>
  readonly split: ReadonlyArray<PartRange>
}

/**
 * The manifest of a payout in several operations (a `TxRecord` holding its split and the API key that pays), saved
 * before any part is signed; a plan turn's names its turn.
 */
export const partsManifest = (input: PartsInput, id: string, turn?: bigint): Effect.Effect<TxRecord> =>
  Effect.map(
    Clock.currentTimeMillis,
    (createdAt): TxRecord => ({
      id,
      kind: "payout",
      owner: input.owner,
      network: input.network.slug,
      chainId: input.network.chainId,
      account: input.safe.address,
      status: "submitted",
      createdAt,
      details: {
        ...input.details,
        parts: input.split,
        ...(turn === undefined ? {} : { turn: String(turn) }),
        apiKey: input.payer.apiKey
      }
    })
  )

/** What a plan turn's payout is made of: as read by this request, used only when it is the turn's first. */
export interface TurnInput extends PartsInput {
  /** The turn: the next sequence on the account's plan payout nonce key, read before the balance. */
  readonly turn: OperationNonce
}

/** Whether a part's outcome stands as signed (sent, or recorded before it was sent). */
const signed = (outcome: PartOutcome): outcome is Extract<PartOutcome, { readonly _tag: "Recorded" }> =>
  outcome._tag === "Recorded" && outcome.record.details.failure === undefined

/**
 * Sends the previous turn's unsent parts, if its payout was split, then fails while that payout is not settled: with
 * what kept a part unsent (a budget's `429`, the bundler's refusal, `503` when it did not answer), or
 * `PlanPayoutTaken` (`409 payout_in_progress`) while a part is pending or waits for the account's pending operations.
 * A gateway that died between parts loses none, with or without the Idempotency-Key. Read before the balance: a turn
 * starts on a balance no earlier turn still owes from.
 */
export const previousTurnSettled = (
  services: PartServices,
  network: Network,
  identity: AccountIdentity,
  safe: SafeAccount,
  turn: OperationNonce
) =>
  Effect.gen(function* () {
    if (turn.sequence === 0n) return
    const previous = yield* services.log.find(planTurnId(network.chainId, safe.address, turn.sequence - 1n))
    if (previous === undefined) return
    const payer = { kind: "payout", apiKey: String(previous.details.apiKey) } as const
    const outcomes = yield* sendParts(services, { manifest: previous, network, identity, safe, payer })
    const unsent = outcomes.find((outcome) => outcome._tag === "Unsent")
    // Waiting for the account's own pending operations (the bundler's per-sender limit) is the turn in progress;
    // any other reason is answered as it is, so that a spent budget or a refusing bundler is not hidden behind a 409.
    if (unsent !== undefined && !mempoolFull(unsent.error)) return yield* asPayoutError(network, unsent.error)
    if (unsent !== undefined) return yield* new PlanPayoutTaken()
    if (splitPayoutView(previous, yield* partsNow(services, previous, network)).status === "submitted") {
      return yield* new PlanPayoutTaken()
    }
  })

/**
 * Pays the turn's payout: under the turn's lock, its manifest found or saved (this request's transfers only when it
 * is the turn's first), and its parts not recorded yet sent, in order.
 */
export const payTurn = (services: PartServices, input: TurnInput) =>
  Effect.gen(function* () {
    const { network, safe, turn } = input
    const id = planTurnId(network.chainId, safe.address, turn.sequence)
    const lock = yield* services.locks.acquire(`plan-turn:${id}`, TURN_LOCK_MS)
    const { manifest, outcomes } = yield* Effect.gen(function* () {
      const found = yield* services.log.find(id)
      const manifest = found ?? (yield* partsManifest(input, id, turn.sequence))
      if (found === undefined) yield* services.log.save(manifest)
      const payer = { kind: "payout", apiKey: String(manifest.details.apiKey) } as const
      const outcomes = yield* sendParts(services, { manifest, network, identity: input.identity, safe, payer })
      if (!outcomes.some(signed)) {
        // Part 0 refused or not sent: the turn was not taken and nothing of it was signed; nothing of it stands.
        for (const outcome of outcomes) if (outcome._tag !== "Unsent") yield* services.log.discard(outcome.record.id)
        yield* services.log.discard(manifest.id)
      }
      return { manifest, outcomes }
    }).pipe(Effect.ensuring(lock.release))
    const first = outcomes.find(signed)
    if (first === undefined) {
      const refused = outcomes.find((outcome) => outcome._tag !== "Recorded")
      // Another request's refusal, found recorded: its turn was not taken either; this one sent nothing.
      if (refused === undefined) return yield* new PlanPayoutTaken()
      const { error } = refused
      switch (error._tag) {
        case "BundlerRejected":
        case "BundlerRefusedSetup":
        case "BundlerBusy":
        case "BundlerUnavailable":
        case "CallReverted":
        case "ChainUnavailable":
          return yield* planTurnTaken(network, safe, turn, error)
        default:
          return yield* asPayoutError(network, error)
      }
    }
    yield* Effect.annotateCurrentSpan("walletgate.payout_id", manifest.id)
    yield* Effect.logInfo("walletgate: plan payout submitted in parts").pipe(
      Effect.annotateLogs({ network: network.slug, account: manifest.account, parts: input.split.length })
    )
    if (outcomes.some((outcome) => outcome._tag === "Unsent")) {
      return yield* new OutcomeUnknown({ id: manifest.id, txHash: first.record.userOpHash ?? "" })
    }
    return splitPayoutView(manifest, yield* partsNow(services, manifest, network))
  })
