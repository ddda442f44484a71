import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { getAddress } from "viem"
import { Forbidden } from "../auth/errors"
import type { ChainUnavailable, UnsupportedChain } from "../chain/errors"
import { type Network, Networks } from "../chain/networks"
import type {
  AccountDeploying,
  BundlerBusy,
  BundlerRefusedSetup,
  BundlerRejected,
  CallReverted,
  GasBudgetExhausted,
  GasCeilingExceeded,
  GasPriceAboveCap
} from "../operations/errors"
import { automationIdentity } from "../operations/identity"
import { KeyVault } from "../operations/KeyVault"
import type { PaymasterServiceError } from "../operations/paymasterService"
import { SpendPolicy } from "../operations/SpendPolicy"
import { UserOperations } from "../operations/UserOperations"
import { randomUuid, SecureRandom } from "../random/SecureRandom"
import { AccountLocks } from "../state/AccountLocks"
import type { StoreUnavailable } from "../state/errors"
import type { IdempotencyInFlight } from "../state/IdempotencyStore"
import { OutcomeUnknown } from "../state/IdempotencyStore"
import { TransactionLog, type TxRecord } from "../state/TransactionLog"
import type { ApiKeyRecord } from "./ApiKeys"
import { AutomationAccounts, automationSafe } from "./accounts"
import {
  AccountNotFound,
  type AmountPrecision,
  type AssetDecimalsUnknown,
  type AssetNotAToken,
  type InsufficientBalance,
  InvalidPayout,
  NoPayoutPlan,
  type NothingToDisperse,
  PayoutNotFound,
  type PlanPayoutTaken,
  UnknownNetwork
} from "./errors"
import { isManifest, type PartServices, partsNow, payoutOfPart, sendParts } from "./parts"
import { explicitTransfers, planNonce, planTransfers, planTurnTaken } from "./planning"
import type { DisperseRequest, PayoutResponse } from "./schemas"
import { MAX_PARTS, partCallGasFloor, splitPayout, splitPlan, transferKind } from "./split"
import { checkExplicit, disperseCalls, shownDetails } from "./transfers"
import { asPayoutError, type PartsInput, partsManifest, payTurn, previousTurnSettled } from "./turns"
import { payoutView, splitPayoutView } from "./views"

type PayoutError =
  | UnknownNetwork
  | Forbidden
  | AccountNotFound
  | InvalidPayout
  | NoPayoutPlan
  | NothingToDisperse
  | InsufficientBalance
  | AssetNotAToken
  | AssetDecimalsUnknown
  | AmountPrecision
  | PlanPayoutTaken
  | CallReverted
  | BundlerRejected
  | BundlerRefusedSetup
  | BundlerBusy
  | PaymasterServiceError
  | GasCeilingExceeded
  | GasBudgetExhausted
  | GasPriceAboveCap
  | AccountDeploying
  | UnsupportedChain
  | ChainUnavailable
  | StoreUnavailable
  | IdempotencyInFlight
  | OutcomeUnknown

/**
 * Automation payouts (SPEC §4.4): pay an automation account's funds out to its recipients in sponsored user operations
 * from the account's Safe (native and ERC-20 transfers batched), within the API key's gas budget: one operation, or,
 * for a payout larger than one operation may be, several, each executed at most once.
 */
export class Payouts extends Context.Service<
  Payouts,
  {
    /**
     * Pays out by the plan (`{}`) or as the body lists (amounts in whole tokens, scaled by each asset's decimals on
     * chain, unless `unit` is `base`); the key must cover the network (resolved by the caller) and the account.
     */
    readonly disperse: (
      key: ApiKeyRecord,
      network: Network,
      address: string,
      request: DisperseRequest
    ) => Effect.Effect<PayoutResponse, PayoutError>
    /** A payout of the account, with where it stands now (read from the bundler, confirmed on the node). */
    readonly find: (
      key: ApiKeyRecord,
      network: string,
      address: string,
      id: string
    ) => Effect.Effect<
      PayoutResponse,
      UnknownNetwork | Forbidden | PayoutNotFound | ChainUnavailable | StoreUnavailable
    >
    /**
     * A payout on `network` by its operation's hash (the answer's `hash`) or its including transaction's, with where
     * it stands now; found only when the key covers its account and network, and never another key's.
     */
    readonly findByHash: (
      key: ApiKeyRecord,
      network: string,
      hash: string
    ) => Effect.Effect<
      PayoutResponse,
      UnknownNetwork | Forbidden | PayoutNotFound | ChainUnavailable | StoreUnavailable
    >
    /**
     * The answer a retry with the payout's Idempotency-Key gets: the record's payout, its signed operation re-sent as
     * it was (same hash) when the bundler does not know it (a crash between recording and sending); for a split payout,
     * its parts not recorded yet sent first (never one twice); `undefined` when there is no record (nothing was sent).
     */
    readonly recover: (id: string) => Effect.Effect<PayoutResponse | undefined, ChainUnavailable | StoreUnavailable>
  }
>()("@walletgate/core/Payouts") {
  /** The service over `Networks`, `AutomationAccounts`, `KeyVault`, `UserOperations`, `SpendPolicy` and `TransactionLog`. */
  static readonly layer = Layer.effect(
    Payouts,
    Effect.gen(function* () {
      const networks = yield* Networks
      const accounts = yield* AutomationAccounts
      const vault = yield* KeyVault
      const operations = yield* UserOperations
      const spend = yield* SpendPolicy
      const log = yield* TransactionLog
      const locks = yield* AccountLocks
      const newPayoutId = Effect.provideService(randomUuid, SecureRandom, yield* SecureRandom)
      const parts: PartServices = { operations, log, locks, spend }

      /** The network, if the key covers it; a test key never acts on a live network. */
      const authoriseNetwork = Effect.fnUntraced(function* (key: ApiKeyRecord, slug: string) {
        const network = networks.resolve(slug)
        if (network === undefined) return yield* new UnknownNetwork({ network: slug })
        return yield* coversNetwork(key, network)
      })

      /** The network, if the key covers it; a test key never acts on a live network. */
      const coversNetwork = Effect.fnUntraced(function* (key: ApiKeyRecord, network: Network) {
        if (!key.networks.includes(network.slug))
          return yield* new Forbidden({ reason: "the key does not cover this network" })
        if (key.mode === "test" && !network.testnet) {
          return yield* new Forbidden({ reason: "a test key never moves funds on a live network" })
        }
        return network
      })

      /** The network, if the key covers it and the account. */
      const authorise = Effect.fnUntraced(function* (key: ApiKeyRecord, slug: string, address: string) {
        return yield* coversAccount(key, yield* authoriseNetwork(key, slug), address)
      })

      /** The network, if the key covers it and the account. */
      const coversAccount = Effect.fnUntraced(function* (key: ApiKeyRecord, network: Network, address: string) {
        const covered = yield* coversNetwork(key, network)
        if (!key.accounts.includes(address.toLowerCase())) {
          return yield* new Forbidden({ reason: "the key does not cover this account" })
        }
        return covered
      })

      const disperse = Effect.fn("Payouts.disperse")(function* (
        key: ApiKeyRecord,
        resolved: Network,
        address: string,
        request: DisperseRequest
      ) {
        const network = yield* coversAccount(key, resolved, address)
        const account = yield* accounts.find(network.slug, address)
        if (account === undefined) return yield* new AccountNotFound()
        const explicit = checkExplicit(request)
        if (explicit._tag === "Invalid") return yield* explicit.error
        const plan = explicit._tag === "Plan" ? account.plan : undefined
        if (explicit._tag === "Plan" && plan === undefined) return yield* new NoPayoutPlan()
        const identity = automationIdentity(account.accountKey)
        const safe = automationSafe((yield* vault.owner(identity)).address, account)
        if (safe.address !== getAddress(account.address)) {
          // Registered under an address that is not the Safe of its name (and co-owner): nothing here signs for it.
          yield* Effect.logWarning("walletgate: an automation account's address is not the Safe of its name").pipe(
            Effect.annotateLogs({ network: network.slug, account: account.address })
          )
          return yield* new AccountNotFound()
        }
        // A plan payout reads its nonce before the balance: if another plan payout lands in between, this one's nonce
        // is spent and it cannot execute; if not, the balance it reads is the one it pays out.
        const nonce =
          plan === undefined ? undefined : yield* planNonce(network, safe.address, safe.contracts.entryPoint)
        const payer = { kind: "payout", apiKey: key.id } as const
        // A plan payout is split by its recipients (a pure function of the plan and the ceiling); one that needs several
        // operations is its turn's one payout (turns.ts), every recipient paid a positive amount.
        const planSplit = plan === undefined ? undefined : splitPlan(plan, network.spend.payoutCeiling)
        if (plan !== undefined && nonce !== undefined && planSplit !== undefined) {
          yield* previousTurnSettled(parts, network, identity, safe, nonce)
          const planned = yield* planTransfers(network, safe.address, plan, true)
          return yield* payTurn(parts, {
            network,
            identity,
            safe,
            payer,
            owner: account.address,
            details: shownDetails(planned),
            split: planSplit,
            turn: nonce
          })
        }
        const planned =
          plan === undefined
            ? yield* explicitTransfers(network, safe.address, request)
            : yield* planTransfers(network, safe.address, plan)
        // A plan payout of one operation: its turn is the plan nonce, which that operation takes.
        const split =
          plan === undefined
            ? splitPayout(planned.transfers.map(transferKind), network.spend.payoutCeiling)
            : ({ _tag: "Parts", parts: [{ from: 0, to: planned.transfers.length }] } as const)
        if (split._tag === "TooManyParts") {
          return yield* new InvalidPayout({
            errors: [
              {
                path: "/assets",
                message: `Expected at most ${MAX_PARTS} operations within the network's payout ceiling; this payout needs ${split.parts} or more`
              }
            ]
          })
        }
        if (split.parts.length > 1) {
          return yield* disperseInParts({
            network,
            identity,
            safe,
            payer,
            owner: account.address,
            details: shownDetails(planned),
            split: split.parts
          })
        }
        const record = yield* operations
          .submit({
            network,
            identity,
            account: safe,
            intent: {
              calls: disperseCalls(planned.transfers),
              kind: "payout",
              owner: account.address,
              details: shownDetails(planned)
            },
            // The spend policy before anything is sponsored or signed: a refused payout costs nothing.
            spender: payer,
            ...(nonce === undefined ? {} : { nonce }),
            // Counted as a part's (cold recipients that do not exist yet): a bundler's estimate may have been taken
            // after another pending operation warmed or created them. Within the ceiling: the split counted it so.
            callGasFloor: partCallGasFloor(planned.transfers.map(transferKind))
          })
          .pipe(
            Effect.catchTags({
              BundlerRejected: (error) => planTurnTaken(network, safe, nonce, error),
              BundlerRefusedSetup: (error) => planTurnTaken(network, safe, nonce, error),
              BundlerBusy: (error) => planTurnTaken(network, safe, nonce, error),
              BundlerUnavailable: (error) => planTurnTaken(network, safe, nonce, error),
              CallReverted: (error) => planTurnTaken(network, safe, nonce, error),
              // The winner of a race of plan payouts can land between this one's balance read and its simulation,
              // which then fails for want of funds (a node error, not a revert): the moved nonce tells it apart.
              ChainUnavailable: (error) => planTurnTaken(network, safe, nonce, error)
            })
          )
        yield* Effect.annotateCurrentSpan("walletgate.payout_id", record.id)
        yield* Effect.logInfo("walletgate: payout submitted").pipe(
          Effect.annotateLogs({ network: network.slug, account: record.account, userOpHash: record.userOpHash })
        )
        return payoutView(record)
      })

      /**
       * A payout larger than one operation: its manifest saved before any part is signed, then its parts sent in
       * order. Nothing signed (every part refused, or the first not sent): nothing stands, and the request fails as a
       * payout of one operation would. Some part left unsent for a reason a retry can change: `outcome_unknown` with
       * the payout's id, and a retry with the Idempotency-Key sends the rest.
       */
      const disperseInParts = Effect.fnUntraced(function* (input: PartsInput) {
        const { network, identity, safe, payer } = input
        const manifest = yield* partsManifest(input, yield* newPayoutId)
        yield* log.save(manifest)
        const outcomes = yield* sendParts(parts, { manifest, network, identity, safe, payer })
        const first = outcomes.find((outcome) => outcome._tag === "Recorded")?.record.userOpHash
        const refused = outcomes.find((outcome) => outcome._tag !== "Recorded")
        if (first === undefined) {
          for (const outcome of outcomes) if (outcome._tag === "Failed") yield* log.discard(outcome.record.id)
          yield* log.discard(manifest.id)
          if (refused !== undefined) return yield* asPayoutError(network, refused.error)
          return yield* Effect.die(new Error("a payout with no part signed and none refused"))
        }
        yield* Effect.annotateCurrentSpan("walletgate.payout_id", manifest.id)
        yield* Effect.logInfo("walletgate: payout submitted in parts").pipe(
          Effect.annotateLogs({ network: network.slug, account: manifest.account, parts: input.split.length })
        )
        if (outcomes.some((outcome) => outcome._tag === "Unsent")) {
          return yield* new OutcomeUnknown({ id: manifest.id, txHash: first })
        }
        return splitPayoutView(manifest, yield* partsNow(parts, manifest, undefined))
      })

      /** A split payout's manifest as its answer: its parts not recorded yet sent first (`resume`), then read. */
      const manifestAnswer = Effect.fnUntraced(function* (manifest: TxRecord, resume: boolean) {
        const network = networks.resolve(manifest.network)
        const account = network === undefined ? undefined : yield* accounts.find(network.slug, manifest.account)
        if (resume && network !== undefined && account !== undefined) {
          const identity = automationIdentity(account.accountKey)
          const safe = automationSafe((yield* vault.owner(identity)).address, account)
          const payer = { kind: "payout", apiKey: String(manifest.details.apiKey) } as const
          yield* sendParts(parts, { manifest, network, identity, safe, payer })
        }
        return splitPayoutView(manifest, yield* partsNow(parts, manifest, network))
      })

      const find = Effect.fn("Payouts.find")(function* (key: ApiKeyRecord, slug: string, address: string, id: string) {
        const network = yield* authorise(key, slug, address)
        const record = yield* log.find(id)
        if (
          record === undefined ||
          record.kind !== "payout" ||
          record.network !== network.slug ||
          record.account.toLowerCase() !== address.toLowerCase() ||
          payoutOfPart(record) !== undefined
        ) {
          return yield* new PayoutNotFound()
        }
        if (isManifest(record)) return yield* manifestAnswer(record, false)
        const status = yield* operations.status(record, network)
        return payoutView(status.record, status)
      })

      const findByHash = Effect.fn("Payouts.findByHash")(function* (key: ApiKeyRecord, slug: string, hash: string) {
        const network = yield* authoriseNetwork(key, slug)
        // Another key's payout is answered as no payout at all: the hash reveals nothing about whose it is. A bundle's
        // transaction hash is shared by every operation it included: the key's own payout on the network is answered.
        const record = (yield* log.findByHash(hash)).find(
          (candidate) =>
            candidate.kind === "payout" &&
            candidate.network === network.slug &&
            key.accounts.includes(candidate.account.toLowerCase())
        )
        if (record === undefined) return yield* new PayoutNotFound()
        // An operation of a split payout answers the whole payout.
        const payoutId = payoutOfPart(record)
        if (payoutId !== undefined) {
          const manifest = yield* log.find(payoutId)
          if (manifest === undefined) return yield* new PayoutNotFound()
          return yield* manifestAnswer(manifest, false)
        }
        const status = yield* operations.status(record, network)
        return payoutView(status.record, status)
      })

      const recover = Effect.fn("Payouts.recover")(function* (id: string) {
        const record = yield* log.find(id)
        if (record === undefined) return undefined
        if (isManifest(record)) return yield* manifestAnswer(record, true)
        const network = networks.resolve(record.network)
        if (network === undefined) return payoutView(record)
        // Reading its status re-sends the signed operation when the bundler does not know it.
        const status = yield* operations.status(record, network)
        return payoutView(status.record, status)
      })

      return Payouts.of({ disperse, find, findByHash, recover })
    })
  )
}
