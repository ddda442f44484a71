import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Networks } from "../chain/networks"
import type { GatewayRequest } from "../http/contract"
import { idempotencyKey } from "../http/idempotency"
import { decoderOf, documented, routeWithBody, routeWithoutBody } from "../http/route"
import { idempotent } from "../operations/idempotency"
import { type ApiKeyRecord, authenticateApiKey } from "./ApiKeys"
import { UnknownNetwork } from "./errors"
import { Payouts } from "./Payouts"
import { DisperseRequest, PayoutPath, PayoutResponse, TransferRequest, TxPath } from "./schemas"

const decodePath = decoderOf(PayoutPath)
const decodeTxPath = decoderOf(TxPath)
// Unknown fields are refused, never dropped: a field the gateway does not know may mean something its sender expects.
const decodeDisperse = decoderOf(DisperseRequest, { exact: true })
const decodeTransfer = decoderOf(TransferRequest, { exact: true })

/**
 * Runs one payout of the account in the path exactly once per Idempotency-Key: the key's scope is the resolved network
 * and the account (`/v1/anvil/…` and `/v1/31337/…` are one), the fingerprint the request as the service reads it.
 */
const payoutOnce = (
  request: GatewayRequest,
  key: ApiKeyRecord,
  path: typeof PayoutPath.Type,
  fingerprint: unknown,
  body: DisperseRequest
) =>
  Effect.gen(function* () {
    const payouts = yield* Payouts
    // Resolved once: the key's scope and the payout read the same network.
    const network = (yield* Networks).resolve(path.network)
    return yield* idempotent({
      key: yield* idempotencyKey(request),
      scope: `payout:${network?.slug ?? path.network}:${path.address.toLowerCase()}`,
      request: fingerprint,
      run: (network === undefined
        ? Effect.fail(new UnknownNetwork({ network: path.network }))
        : payouts.disperse(key, network, path.address, body)
      ).pipe(Effect.map((view) => ({ status: 200, body: view }))),
      // A retry finds the recorded payout and re-sends its signed operation if the bundler lacks it.
      recover: (id) =>
        payouts.recover(id).pipe(Effect.map((view) => (view === undefined ? undefined : { status: 200, body: view })))
    })
  })

/**
 * `POST /v1/:network/account/:address/payout/disperse`, `POST …/payout/transfer`, `GET …/payout/:id` and
 * `GET /v1/:network/tx/:hash`.
 */
export const payoutRoutes = [
  documented(
    routeWithBody(
      "POST",
      "/v1/:network/account/:address/payout/disperse",
      Schema.Unknown,
      Effect.fnUntraced(function* (body, context) {
        // The key first: without one, nothing about the account or the body is revealed.
        const key = yield* authenticateApiKey(context.request.headers["x-api-key"])
        const path = yield* decodePath(context.params)
        const request = yield* decodeDisperse(body)
        // The unit as read: a request that leaves it out and one that names the default are one request.
        const fingerprint = request.assets === undefined ? request : { ...request, unit: request.unit ?? "token" }
        return yield* payoutOnce(context.request, key, path, fingerprint, request)
      })
    ),
    {
      summary:
        "Pays out from an automation account: by its plan (`{}`) or the transfers given (amounts in whole tokens unless `unit` is `base`).",
      security: "apiKey",
      params: PayoutPath,
      body: DisperseRequest,
      idempotent: true,
      answers: [{ status: 200, description: "The payout.", schema: PayoutResponse }]
    }
  ),
  documented(
    routeWithBody(
      "POST",
      "/v1/:network/account/:address/payout/transfer",
      Schema.Unknown,
      Effect.fnUntraced(function* (body, context) {
        const key = yield* authenticateApiKey(context.request.headers["x-api-key"])
        const path = yield* decodePath(context.params)
        const request = yield* decodeTransfer(body)
        const unit = request.unit ?? "token"
        return yield* payoutOnce(
          context.request,
          key,
          path,
          { transfer: { ...request, unit } },
          {
            assets: [request.asset],
            amounts: [request.amount],
            recipients: [request.recipient],
            unit
          }
        )
      })
    ),
    {
      summary:
        "Pays one asset to one recipient from an automation account (the amount in whole tokens unless `unit` is `base`).",
      security: "apiKey",
      params: PayoutPath,
      body: TransferRequest,
      idempotent: true,
      answers: [{ status: 200, description: "The payout.", schema: PayoutResponse }]
    }
  ),
  documented(
    routeWithoutBody(
      "GET",
      "/v1/:network/account/:address/payout/:id",
      Effect.fnUntraced(function* (context) {
        const key = yield* authenticateApiKey(context.request.headers["x-api-key"])
        const path = yield* decodePath(context.params)
        const payouts = yield* Payouts
        return { status: 200, body: yield* payouts.find(key, path.network, path.address, context.params.id ?? "") }
      })
    ),
    {
      summary: "A payout of an automation account, by id.",
      security: "apiKey",
      params: PayoutPath,
      answers: [{ status: 200, description: "The payout.", schema: PayoutResponse }]
    }
  ),
  documented(
    routeWithoutBody(
      "GET",
      "/v1/:network/tx/:hash",
      Effect.fnUntraced(function* (context) {
        const key = yield* authenticateApiKey(context.request.headers["x-api-key"])
        const path = yield* decodeTxPath(context.params)
        const payouts = yield* Payouts
        return { status: 200, body: yield* payouts.findByHash(key, path.network, path.hash) }
      })
    ),
    {
      summary:
        "A payout by its `hash` (the operation's hash) or its including transaction's hash, with where it stands now.",
      security: "apiKey",
      params: TxPath,
      answers: [{ status: 200, description: "The payout.", schema: PayoutResponse }]
    }
  )
]
