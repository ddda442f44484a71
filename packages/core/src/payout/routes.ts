import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Networks } from "../chain/networks"
import { idempotent } from "../http/idempotency"
import { decoderOf, documented, routeWithBody, routeWithoutBody } from "../http/route"
import { authenticateApiKey } from "./ApiKeys"
import { Payouts } from "./Payouts"
import { DisperseRequest, PayoutPath, PayoutResponse } from "./schemas"

const decodePath = decoderOf(PayoutPath)
const decodeDisperse = decoderOf(DisperseRequest)

/** `POST /v1/:network/account/:address/payout/disperse` and `GET /v1/:network/account/:address/payout/:id`. */
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
        const payouts = yield* Payouts
        // The network as resolved and the address in one case: `/v1/anvil/…` and `/v1/31337/…` are one scope.
        const network = (yield* Networks).resolve(path.network)?.slug ?? path.network
        const account = path.address.toLowerCase()
        return yield* idempotent({
          key: context.request.headers["idempotency-key"],
          scope: `payout:${network}:${account}`,
          request,
          run: payouts
            .disperse(key, path.network, path.address, request)
            .pipe(Effect.map((view) => ({ status: 200, body: view }))),
          // A retry finds the recorded payout and re-sends its signed operation if the bundler lacks it.
          recover: (id) =>
            payouts
              .recover(id)
              .pipe(Effect.map((view) => (view === undefined ? undefined : { status: 200, body: view })))
        })
      })
    ),
    {
      summary: "Pays out from an automation account: by its plan (`{}`) or the transfers given.",
      security: "apiKey",
      params: PayoutPath,
      body: DisperseRequest,
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
  )
]
