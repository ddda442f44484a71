import { describe, expect, it } from "@effect/vitest"
import { IdempotencyStore, StoreUnavailable } from "@walletgate/core"
import { ChainUnavailable } from "@walletgate/core/chain"
import { OperationLink } from "@walletgate/core/operations"
import { IdempotencyInFlight, type LinkedOperation } from "@walletgate/core/state"
import { Deferred, Effect, Exit, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { IDEMPOTENCY_LEASE_MS, idempotent } from "../../src/operations/idempotency"
import { OutcomeUnknown } from "../../src/state/IdempotencyStore"

/** What a route answers (the gateway's `Reply`). */
interface Reply {
  readonly status: number
  readonly body: unknown
  readonly headers?: Readonly<Record<string, string>>
}

// `idempotent` over the memory store, with a stand-in for a money operation that does what the relay does:
// record, link the record to the key, send. `records` is the transaction log, `sent` what went out.
const world = () => {
  const records = new Map<string, Reply>()
  const sent: Array<string> = []
  let next = 0
  /** One operation: recorded, linked, then `after` (by default: sent, answered). */
  const operation = (after: (operation: LinkedOperation) => Effect.Effect<Reply, ChainUnavailable> = answer) =>
    Effect.gen(function* () {
      next += 1
      const op = { id: `tx-${next}`, txHash: `0x${String(next).padStart(64, "0")}` }
      records.set(op.id, { status: 200, body: { id: op.id, txHash: op.txHash } })
      yield* (yield* OperationLink).link(op)
      return yield* after(op)
    })
  const answer = (op: LinkedOperation) =>
    Effect.sync((): Reply => {
      sent.push(op.id)
      return { status: 200, body: { id: op.id, txHash: op.txHash } }
    })
  const request = <E, R>(run: Effect.Effect<Reply, E, R>, waitMs = 0) =>
    idempotent({
      key: "order-1",
      scope: "payout:anvil:0xabc",
      request: { pay: 1 },
      run,
      recover: (id) => Effect.sync(() => records.get(id)),
      waitMs
    })
  return { records, sent, operation, request, answer }
}

/** The memory store whose `complete` (or `claim` too) fails while `down` says so. */
const storeFailing = (down: { complete: boolean }) =>
  Layer.effect(
    IdempotencyStore,
    Effect.map(Effect.service(IdempotencyStore), (inner) =>
      IdempotencyStore.of({
        ...inner,
        complete: (...args) =>
          down.complete ? Effect.fail(new StoreUnavailable({ operation: "complete" })) : inner.complete(...args)
      })
    )
  ).pipe(Layer.provide(IdempotencyStore.memory))

describe("idempotent", () => {
  it.effect("answers when the answer cannot be stored, and a retry answers from the record without sending", () =>
    Effect.gen(function* () {
      const w = world()
      const first = yield* w.request(w.operation())
      expect(first.status).toBe(200)
      const retry = yield* w.request(w.operation())
      expect(retry).toEqual({ ...first, headers: { "idempotent-replayed": "true" } })
      expect(w.sent).toEqual(["tx-1"])
    }).pipe(Effect.provide(storeFailing({ complete: true })))
  )

  it.effect("a failure after the link is outcome_unknown with the id and hash; the key keeps the operation", () =>
    Effect.gen(function* () {
      const w = world()
      const failed = yield* w
        .request(w.operation(() => Effect.fail(new ChainUnavailable({ network: "anvil", cause: "test" }))))
        .pipe(Effect.flip)
      expect(failed).toEqual(new OutcomeUnknown({ id: "tx-1", txHash: `0x${"1".padStart(64, "0")}` }))
      const retry = yield* w.request(w.operation())
      expect(retry.body).toEqual({ id: "tx-1", txHash: `0x${"1".padStart(64, "0")}` })
      expect(w.sent).toEqual([])
    }).pipe(Effect.provide(IdempotencyStore.memory))
  )

  it.effect("a failure after the link whose record is gone (refused by the node) gives the key up", () =>
    Effect.gen(function* () {
      const w = world()
      const refused = w.operation((op) =>
        Effect.suspend(() => {
          w.records.delete(op.id)
          return Effect.fail(new ChainUnavailable({ network: "anvil", cause: "refused" }))
        })
      )
      expect(yield* w.request(refused).pipe(Effect.flip)).toBeInstanceOf(ChainUnavailable)
      const retry = yield* w.request(w.operation())
      expect(retry.headers).toBeUndefined()
      expect(w.sent).toEqual(["tx-2"])
    }).pipe(Effect.provide(IdempotencyStore.memory))
  )

  it.effect("a retry whose record cannot be read is outcome_unknown, never a second send", () =>
    Effect.gen(function* () {
      const w = world()
      yield* w.request(w.operation())
      const unreadable = idempotent({
        key: "order-1",
        scope: "payout:anvil:0xabc",
        request: { pay: 1 },
        run: w.operation(),
        recover: () => Effect.fail(new StoreUnavailable({ operation: "TransactionLog.find" })),
        waitMs: 0
      })
      expect(yield* Effect.flip(unreadable)).toEqual(
        new OutcomeUnknown({ id: "tx-1", txHash: `0x${"1".padStart(64, "0")}` })
      )
      expect(w.sent).toEqual(["tx-1"])
    }).pipe(Effect.provide(storeFailing({ complete: true })))
  )

  it.effect(
    "a duplicate of a request that sent nothing yet is 409 after its wait; the key is free when the lease ends",
    () =>
      Effect.gen(function* () {
        const w = world()
        const gate = yield* Deferred.make<void>()
        const slow = yield* Effect.forkChild(w.request(Deferred.await(gate).pipe(Effect.andThen(w.operation()))))
        yield* Effect.yieldNow
        const duplicate = yield* Effect.forkChild(w.request(w.operation(), 1000))
        yield* TestClock.adjust("1001 millis")
        expect(yield* Fiber.join(duplicate).pipe(Effect.flip)).toBeInstanceOf(IdempotencyInFlight)

        // The first request stalls past its lease: a retry takes the key over and sends; the first, when it
        // resumes, can no longer link and sends nothing.
        yield* TestClock.adjust(IDEMPOTENCY_LEASE_MS)
        const retry = yield* w.request(w.operation())
        expect(retry.status).toBe(200)
        yield* Deferred.succeed(gate, undefined)
        const stale = yield* Fiber.await(slow)
        expect(Exit.isFailure(stale) && Exit.findErrorOption(stale)).toMatchObject({
          value: expect.any(IdempotencyInFlight)
        })
        expect(w.sent).toEqual(["tx-1"])
        expect((yield* w.request(w.operation())).body).toEqual(retry.body)
      }).pipe(Effect.provide(IdempotencyStore.memory))
  )
})
