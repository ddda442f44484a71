import { IdempotencyStore, OtpStore, SmsSender, TransactionLog, UserStore } from "@walletgate/core"
import { Effect, Layer } from "effect"

/**
 * The memory stores with every state-changing call counted, to check that a refused request changes
 * nothing. Merge after `embeddedPorts(...)` (a later layer wins).
 */
export const countingPorts = () => {
  const writes: Array<string> = []
  const count = <A, E>(name: string, effect: Effect.Effect<A, E>) =>
    Effect.sync(() => writes.push(name)).pipe(Effect.andThen(effect))
  const layer = Layer.mergeAll(
    Layer.effect(
      OtpStore,
      Effect.gen(function* () {
        const inner = yield* OtpStore
        return OtpStore.of({
          issue: (...args) => count("OtpStore.issue", inner.issue(...args)),
          activate: (...args) => count("OtpStore.activate", inner.activate(...args)),
          withdraw: (...args) => count("OtpStore.withdraw", inner.withdraw(...args)),
          consume: (...args) => count("OtpStore.consume", inner.consume(...args))
        })
      })
    ).pipe(Layer.provide(OtpStore.memory)),
    Layer.effect(
      UserStore,
      Effect.gen(function* () {
        const inner = yield* UserStore
        return UserStore.of({
          ...inner,
          findOrCreate: (user) => count("UserStore.findOrCreate", inner.findOrCreate(user))
        })
      })
    ).pipe(Layer.provide(UserStore.memory)),
    Layer.effect(
      IdempotencyStore,
      Effect.gen(function* () {
        const inner = yield* IdempotencyStore
        return IdempotencyStore.of({
          claim: (...args) => count("IdempotencyStore.claim", inner.claim(...args)),
          link: (...args) => count("IdempotencyStore.link", inner.link(...args)),
          complete: (...args) => count("IdempotencyStore.complete", inner.complete(...args)),
          release: (...args) => count("IdempotencyStore.release", inner.release(...args))
        })
      })
    ).pipe(Layer.provide(IdempotencyStore.memory)),
    Layer.effect(
      TransactionLog,
      Effect.gen(function* () {
        const inner = yield* TransactionLog
        return TransactionLog.of({
          ...inner,
          save: (record) => count("TransactionLog.save", inner.save(record)),
          settle: (...args) => count("TransactionLog.settle", inner.settle(...args)),
          discard: (id) => count("TransactionLog.discard", inner.discard(id))
        })
      })
    ).pipe(Layer.provide(TransactionLog.memory)),
    Layer.succeed(SmsSender, SmsSender.of({ send: () => count("SmsSender.send", Effect.void) }))
  )
  return { writes, layer }
}
