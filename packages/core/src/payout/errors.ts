import * as Schema from "effect/Schema"
import { formatUnits } from "viem"
import { FieldProblem, type ProblemSlice } from "../internal/problem"

/** No API key, or one that is unknown or revoked. Answered 401 `invalid_api_key`. */
export class InvalidApiKey extends Schema.TaggedError<InvalidApiKey>()("InvalidApiKey", {}) {}

/** The network of the path is not served. Answered 404 `unknown_network`. */
export class UnknownNetwork extends Schema.TaggedError<UnknownNetwork>()("UnknownNetwork", {
  network: Schema.String
}) {}

/** No automation account at this address on this network. Answered 404 `account_not_found`. */
export class AccountNotFound extends Schema.TaggedError<AccountNotFound>()("AccountNotFound", {}) {}

/** The account has no payout plan and the request named no transfers. Answered 422 `no_payout_plan`. */
export class NoPayoutPlan extends Schema.TaggedError<NoPayoutPlan>()("NoPayoutPlan", {}) {}

/**
 * What is available (balance less reserve) is below the plan's minimum payout. Answered 422 `nothing_to_disperse`, in
 * base units and, where the asset's decimals are known, in whole tokens too (as the payout answer gives amounts).
 */
export class NothingToDisperse extends Schema.TaggedError<NothingToDisperse>()("NothingToDisperse", {
  asset: Schema.String,
  /** Base units. */
  available: Schema.String,
  /** Base units. */
  minimum: Schema.String,
  decimals: Schema.optionalKey(Schema.Int)
}) {}

/** `base` (base units) in whole tokens of `decimals` (known, and at most 255: `decimalsOfChecked` refuses more). */
const tokens = (base: string, decimals: number): string => formatUnits(BigInt(base), decimals)

/** An explicit payout asks for more of an asset than the account holds. Answered 422 `insufficient_balance`. */
export class InsufficientBalance extends Schema.TaggedError<InsufficientBalance>()("InsufficientBalance", {
  asset: Schema.String,
  requested: Schema.String,
  available: Schema.String
}) {}

/** An asset address with no contract code: not a token, the caller's mistake. Answered 422 `asset_not_a_token`. */
export class AssetNotAToken extends Schema.TaggedError<AssetNotAToken>()("AssetNotAToken", {
  asset: Schema.String
}) {}
/**
 * Another plan payout of this account took the same turn (its nonce) and runs, or ran, instead: plan payouts sent
 * at the same time execute once. Nothing was sent by this request. Answered 409 `payout_in_progress`.
 */
export class PlanPayoutTaken extends Schema.TaggedError<PlanPayoutTaken>()("PlanPayoutTaken", {}) {}

/**
 * Token amounts (the default `unit`) finer than the asset's smallest unit: more non-zero fractional digits than its
 * `decimals()`. Answered 400 `amount_precision`, with the JSON Pointer of each such amount.
 */
export class AmountPrecision extends Schema.TaggedError<AmountPrecision>()("AmountPrecision", {
  amounts: Schema.Array(Schema.Struct({ path: Schema.String, decimals: Schema.Int }))
}) {}

/**
 * The asset's decimals are not known: its contract does not answer `decimals()` (`answer: "none"`; token amounts
 * cannot be scaled, `unit: "base"` pays it in base units), or answers something that is not one word holding a
 * `uint8` (`"not_uint8"`: no ERC-20 does that, and it is paid in no unit). Answered 422 `asset_decimals_unknown`.
 */
export class AssetDecimalsUnknown extends Schema.TaggedError<AssetDecimalsUnknown>()("AssetDecimalsUnknown", {
  asset: Schema.String,
  answer: Schema.Literals(["none", "not_uint8"])
}) {}

/**
 * A payout body that decodes but does not describe a payout (arrays of different lengths, a zero amount, more
 * operations than a payout may take). Answered 400 `invalid_request` with the JSON Pointer of each field, as a body of
 * the wrong shape is.
 */
export class InvalidPayout extends Schema.TaggedError<InvalidPayout>()("InvalidPayout", {
  errors: Schema.Array(FieldProblem)
}) {}

/** No payout with this id for this account. Answered 404 `payout_not_found`. */
export class PayoutNotFound extends Schema.TaggedError<PayoutNotFound>()("PayoutNotFound", {}) {}

/** The errors of the automation interface. */
export type PayoutError =
  | InvalidApiKey
  | UnknownNetwork
  | AccountNotFound
  | NoPayoutPlan
  | NothingToDisperse
  | InsufficientBalance
  | AssetNotAToken
  | PlanPayoutTaken
  | PayoutNotFound
  | AmountPrecision
  | AssetDecimalsUnknown
  | InvalidPayout

/** How the automation interface's errors are answered. */
export const payoutProblems: ProblemSlice<PayoutError> = {
  InvalidApiKey: {
    status: 401,
    code: "invalid_api_key",
    title: "Invalid API key",
    detail: () => "Send a valid, unrevoked key in the X-API-KEY header."
  },
  UnknownNetwork: {
    status: 404,
    code: "unknown_network",
    title: "Unknown network",
    detail: (e) => `This gateway does not serve the network "${e.network}".`
  },
  AccountNotFound: {
    status: 404,
    code: "account_not_found",
    title: "Account not found",
    detail: () => "No automation account at this address on this network."
  },
  NoPayoutPlan: {
    status: 422,
    code: "no_payout_plan",
    title: "No payout plan",
    detail: () => "The account has no payout plan; send assets, amounts and recipients."
  },
  NothingToDisperse: {
    status: 422,
    code: "nothing_to_disperse",
    title: "Nothing to disperse",
    detail: (e) =>
      e.decimals === undefined
        ? `${e.available} base units of ${e.asset} are available (balance less reserve); the minimum payout is ${e.minimum}.`
        : `${tokens(e.available, e.decimals)} of ${e.asset} (${e.available} base units) is available (balance less reserve); the minimum payout is ${tokens(e.minimum, e.decimals)} (${e.minimum} base units).`,
    extensions: (e) => ({
      asset: e.asset,
      available: e.available,
      minimum: e.minimum,
      ...(e.decimals === undefined
        ? {}
        : {
            decimals: e.decimals,
            availableTokenAmount: tokens(e.available, e.decimals),
            minimumTokenAmount: tokens(e.minimum, e.decimals)
          })
    })
  },
  InsufficientBalance: {
    status: 422,
    code: "insufficient_balance",
    title: "Insufficient balance",
    detail: (e) => `The payout needs ${e.requested} of ${e.asset}; the account holds ${e.available}.`,
    extensions: (e) => ({ asset: e.asset, requested: e.requested, available: e.available })
  },
  AssetNotAToken: {
    status: 422,
    code: "asset_not_a_token",
    title: "Asset is not a token",
    detail: (e) =>
      `${e.asset} has no contract code on this network: name the zero address for the native coin, or a token contract. Nothing was sent.`,
    extensions: (e) => ({ asset: e.asset })
  },
  PlanPayoutTaken: {
    status: 409,
    code: "payout_in_progress",
    title: "Payout in progress",
    detail: () =>
      "Another plan payout of this account was sent at the same time and runs instead; nothing was sent by this request. Pay out again once it is final if funds remain.",
    headers: () => ({ "retry-after": "2" })
  },
  PayoutNotFound: {
    status: 404,
    code: "payout_not_found",
    title: "Payout not found",
    detail: () => "No such payout for this account."
  },
  AmountPrecision: {
    status: 400,
    code: "amount_precision",
    title: "Amount finer than the token",
    detail: () =>
      'An amount has more fractional digits than its token has decimals. Amounts are token amounts ("100" = 100 tokens) unless the request says unit "base". Nothing was sent.',
    errors: (e) =>
      e.amounts.map((one) => ({ path: one.path, message: `Expected at most ${one.decimals} fractional digits` }))
  },
  AssetDecimalsUnknown: {
    status: 422,
    code: "asset_decimals_unknown",
    title: "Token decimals unknown",
    detail: (e) =>
      e.answer === "none"
        ? `${e.asset} does not answer decimals(), so a token amount cannot be scaled for it: send unit "base" and amounts in base units. Nothing was sent.`
        : `${e.asset} answers decimals() with something other than a uint8 (one word, 0 to 255), as no ERC-20 does: it is paid out in no unit. Nothing was sent.`,
    extensions: (e) => ({ asset: e.asset, answer: e.answer })
  },
  InvalidPayout: {
    status: 400,
    code: "invalid_request",
    title: "Invalid request",
    detail: (e) => `${e.errors.length} field${e.errors.length === 1 ? " is" : "s are"} invalid.`,
    errors: (e) => e.errors
  }
}
