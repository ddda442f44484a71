import * as Schema from "effect/Schema"
import { ChainParam } from "../chain/networks"
import { AddressString, HexBytes, Uint256String } from "../chain/schemas"
import { TxStatus } from "../state/TransactionLog"

/**
 * `<provider>:<user_id>`: a provider name the app is granted, and the user's id at that provider (at most 256
 * code points, no lone surrogate: those have no UTF-8 form). White space passes the shape so that the provider's
 * canonical form judges it (`canonicalId`): a `tel:` id spelt with spaces is refused naming its E.164 form, any
 * other id holding white space is refused as not canonical.
 */
export const UserIdParam = Schema.String.check(
  Schema.isPattern(/^[a-z0-9][a-z0-9_-]{0,31}:[^:\p{Cs}][^\p{Cs}]{0,255}$/u, {
    message: "Expected <provider>:<user_id>, e.g. phone:5c0f…"
  })
)

/** Body of `POST /v1/kernel/tx` (SPEC §4.3): parallel arrays, one entry per call; no other field is accepted. */
export const KernelTxRequest = Schema.Struct({
  userId: UserIdParam,
  chain: ChainParam,
  to: Schema.Array(AddressString),
  value: Schema.Array(Uint256String),
  data: Schema.Array(HexBytes),
  /**
   * `0` (or absent): each call is a CALL. `1` asks for DELEGATECALLs, which would run foreign code with the
   * wallet's own storage (its owners and modules): refused with `delegatecall_unsupported`, never run as a CALL.
   */
  delegatecall: Schema.optionalKey(Schema.Literals([0, 1])),
  /** The user's JWT from the app's identity provider; may be blank for a test-mode app on a test network. */
  auth: Schema.optionalKey(
    Schema.String.check(Schema.isMaxLength(8192, { message: "Expected at most 8192 characters" }))
  )
})
/** Body of `POST /v1/kernel/tx`. */
export type KernelTxRequest = typeof KernelTxRequest.Type

/**
 * {@link KernelTxRequest} as a batch of 1 to `maxCalls` calls: `to`, `value` and `data` are parallel, one entry per
 * call.
 */
export const kernelTxRequestOf = (maxCalls: number) =>
  KernelTxRequest.check(
    Schema.makeFilter((request) => {
      const { to, value, data } = request
      const issues: Array<Schema.FilterIssue> = []
      if (to.length === 0) issues.push({ path: ["to"], issue: "Expected at least 1 call" })
      if (to.length > maxCalls) issues.push({ path: ["to"], issue: `Expected at most ${maxCalls} calls` })
      if (value.length !== to.length) issues.push({ path: ["value"], issue: `Expected ${to.length} items, as in to` })
      if (data.length !== to.length) issues.push({ path: ["data"], issue: `Expected ${to.length} items, as in to` })
      return issues
    })
  )

/** Answer of `POST /v1/kernel/tx` and `GET /v1/kernel/tx/:id`. */
export const KernelTxResponse = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  chain: Schema.String,
  /** The user's Safe (its address is known before it is deployed). */
  account: Schema.String,
  /** The ERC-4337 operation's hash: known at once, and the same for every retry with one Idempotency-Key. */
  userOpHash: Schema.optionalKey(Schema.String),
  /** The transaction that included the operation, once it is included (it may change if a reorg re-includes it). */
  txHash: Schema.optionalKey(Schema.String),
  status: TxStatus,
  blockNumber: Schema.optionalKey(Schema.Int),
  gasUsed: Schema.optionalKey(Schema.String)
})
/** Answer of `POST /v1/kernel/tx` and `GET /v1/kernel/tx/:id`. */
export type KernelTxResponse = typeof KernelTxResponse.Type

const Hash32 = Schema.String.check(
  Schema.isPattern(/^0x[0-9a-fA-F]{64}$/, { message: "Expected a 32-byte hash: 0x and 64 hex digits" })
)

/**
 * Body of `POST /v1/kernel/txStatus`: exactly one of `userOpHash` (what the Patch SDK sends), `id` (walletgate's id of
 * the transaction) or `txHash` (the transaction that included the operation). No other field is accepted.
 */
export const TxStatusRequest = Schema.Struct({
  userOpHash: Schema.optionalKey(Hash32),
  id: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(64, { message: "Expected at most 64 characters" }))),
  txHash: Schema.optionalKey(Hash32)
}).check(
  Schema.makeFilter(
    (request) => [request.userOpHash, request.id, request.txHash].filter((given) => given !== undefined).length === 1,
    { message: "Expected exactly one of userOpHash, id and txHash" }
  )
)
/** Body of `POST /v1/kernel/txStatus`. */
export type TxStatusRequest = typeof TxStatusRequest.Type
