import * as Schema from "effect/Schema"

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

/** What is available (balance less reserve) is below the plan's minimum payout. Answered 422. */
export class NothingToDisperse extends Schema.TaggedError<NothingToDisperse>()("NothingToDisperse", {
  available: Schema.String,
  minimum: Schema.String
}) {}

/** An explicit payout asks for more of an asset than the account holds. Answered 422 `insufficient_balance`. */
export class InsufficientBalance extends Schema.TaggedError<InsufficientBalance>()("InsufficientBalance", {
  asset: Schema.String,
  requested: Schema.String,
  available: Schema.String
}) {}

/** No payout with this id for this account. Answered 404 `payout_not_found`. */
export class PayoutNotFound extends Schema.TaggedError<PayoutNotFound>()("PayoutNotFound", {}) {}
