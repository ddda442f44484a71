import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { AppAuth } from "../auth/AppAuth"
import { UnsupportedChain } from "../chain/errors"
import { Networks } from "../chain/networks"
import { idempotencyKey } from "../http/idempotency"
import { decoderOf, documented, routeWithBody, routeWithoutBody } from "../http/route"
import { idempotent } from "../operations/idempotency"
import { DelegatecallUnsupported } from "./errors"
import { Kernel, MAX_WAIT_SECONDS } from "./Kernel"
import { KernelTxRequest, KernelTxResponse, kernelTxRequestOf, TxStatusRequest } from "./schemas"

const decodeTxStatus = decoderOf(TxStatusRequest, { exact: true })

/** `?wait=<seconds>`: how long the request may wait for the operation to be final (whole seconds, 0 to 10); empty is none. */
const WaitQuery = Schema.Struct({
  query: Schema.Struct({
    wait: Schema.optional(
      Schema.String.check(
        Schema.makeFilter((raw) => raw === "" || (/^\d{1,2}$/.test(raw) && Number(raw) <= MAX_WAIT_SECONDS), {
          message: `Expected whole seconds from 0 to ${MAX_WAIT_SECONDS}`
        })
      )
    )
  })
})
const decodeWait = decoderOf(WaitQuery)

/** The `?wait` of a request, in seconds; `undefined` when absent or empty. */
const waitOf = (query: URLSearchParams) =>
  Effect.map(decodeWait({ query: { wait: query.get("wait") ?? undefined } }), ({ query: { wait } }) =>
    wait === undefined || wait === "" ? undefined : Number(wait)
  )

/** What `POST /v1/kernel/txStatus` looks for: the one field its schema lets through. */
const lookupOf = (request: TxStatusRequest): { readonly hash: string } | { readonly id: string } =>
  // Exactly one field is there (the schema's check): without `id`, one of the hashes; `""` is never reached.
  request.id === undefined ? { hash: request.userOpHash ?? request.txHash ?? "" } : { id: request.id }

/**
 * `POST /v1/kernel/tx`, `GET /v1/kernel/tx/:id` and `POST /v1/kernel/txStatus`; a batch holds 1 to `maxCalls` calls
 * (its schema says so: `kernelTxRequestOf`).
 */
export const kernelRoutes = (maxCalls: number) => {
  const decodeTx = decoderOf(kernelTxRequestOf(maxCalls), { exact: true })
  return [
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
          const wait = yield* waitOf(context.request.query)
          const kernel = yield* Kernel
          const key = yield* idempotencyKey(context.request)
          // Resolved once for the whole request; `"chain": "anvil"` and `"chain": "31337"` are one request.
          const network = (yield* Networks).resolve(request.chain)
          if (network === undefined) return yield* new UnsupportedChain({ chain: request.chain })
          return yield* idempotent({
            key,
            scope: `kernel:${app.clientId}`,
            request: { ...request, chain: network.slug },
            run: kernel.send(app, request, network, wait).pipe(Effect.map((view) => ({ status: 200, body: view }))),
            // A retry of a request whose answer was lost: the same operation, re-sent as it was if the bundler lost it.
            recover: (id) =>
              kernel
                .recover(app, id)
                .pipe(Effect.map((view) => (view === undefined ? undefined : { status: 200, body: view })))
          })
        })
      ),
      {
        summary:
          "Sends a batch of calls from a user's Safe as one ERC-4337 operation; `?wait=<seconds>` (at most 10) waits for it to be final.",
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
    ),
    documented(
      routeWithBody(
        "POST",
        "/v1/kernel/txStatus",
        Schema.Unknown,
        Effect.fnUntraced(function* (body, context) {
          const app = yield* (yield* AppAuth).authenticate(context.request.headers.authorization)
          const by = lookupOf(yield* decodeTxStatus(body))
          // The Patch SDK asks again at once when the answer has no txHash, four times in all: by default the status is
          // read for up to MAX_WAIT_SECONDS until the operation is included, so that it gets one.
          const wait = (yield* waitOf(context.request.query)) ?? MAX_WAIT_SECONDS
          return { status: 200, body: yield* (yield* Kernel).lookup(app, by, wait) }
        })
      ),
      {
        summary:
          "A transaction sent by this app, by `userOpHash`, `id` or `txHash`; waits (`?wait=<seconds>`, default and at most 10) until it is included or final.",
        security: "bearer",
        body: TxStatusRequest,
        answers: [{ status: 200, description: "The transaction.", schema: KernelTxResponse }]
      }
    )
  ]
}
