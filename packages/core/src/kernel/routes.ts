import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { AppAuth } from "../auth/AppAuth"
import { Networks } from "../chain/networks"
import { idempotent } from "../http/idempotency"
import { decoderOf, documented, routeWithBody, routeWithoutBody } from "../http/route"
import { TransactionLog } from "../state/TransactionLog"
import { DelegatecallUnsupported } from "./errors"
import { Kernel, kernelTxView } from "./Kernel"
import { KernelTxRequest, KernelTxResponse } from "./schemas"

const decodeTx = decoderOf(KernelTxRequest, { exact: true })

/** `POST /v1/kernel/tx` and `GET /v1/kernel/tx/:id`. */
export const kernelRoutes = [
  documented(
    routeWithBody(
      "POST",
      "/v1/kernel/tx",
      Schema.Unknown,
      Effect.fnUntraced(function* (body, context) {
        // Authenticate before looking at the body: an unauthenticated caller learns nothing about it.
        const app = yield* (yield* AppAuth).authenticate(context.request.headers.authorization)
        const request = yield* decodeTx(body)
        if (request.delegatecall === 1) return yield* new DelegatecallUnsupported()
        const kernel = yield* Kernel
        const log = yield* TransactionLog
        // The chain as resolved: `"chain": "anvil"` and `"chain": "31337"` are one request.
        const chain = (yield* Networks).resolve(request.chain)?.slug ?? request.chain
        return yield* idempotent({
          key: context.request.headers["idempotency-key"],
          scope: `kernel:${app.clientId}`,
          request: { ...request, chain },
          run: kernel.send(app, request).pipe(Effect.map((view) => ({ status: 200, body: view }))),
          recover: (id) =>
            log
              .find(id)
              .pipe(
                Effect.map((record) => (record === undefined ? undefined : { status: 200, body: kernelTxView(record) }))
              )
        })
      })
    ),
    {
      summary: "Sends a batch of calls from a user's smart account.",
      security: "bearer",
      body: KernelTxRequest,
      idempotent: true,
      answers: [{ status: 200, description: "The transaction.", schema: KernelTxResponse }]
    }
  ),
  documented(
    routeWithoutBody(
      "GET",
      "/v1/kernel/tx/:id",
      Effect.fnUntraced(function* (context) {
        const app = yield* (yield* AppAuth).authenticate(context.request.headers.authorization)
        const kernel = yield* Kernel
        return { status: 200, body: yield* kernel.find(app, context.params.id ?? "") }
      })
    ),
    {
      summary: "A transaction sent by this app, by id.",
      security: "bearer",
      answers: [{ status: 200, description: "The transaction.", schema: KernelTxResponse }]
    }
  )
]
