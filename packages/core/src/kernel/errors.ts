import * as Schema from "effect/Schema"

/** No transaction with this id is visible to the caller. Answered 404 `tx_not_found`. */
export class TxNotFound extends Schema.TaggedError<TxNotFound>()("TxNotFound", {}) {}
