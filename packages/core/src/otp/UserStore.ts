import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { USER_ID_PATTERN } from "../auth/canonicalIdentity"
import { PhoneE164 } from "../auth/phone"
import type { StoreUnavailable } from "../state/errors"

/** The stable id of a user: a version-4 UUID, given once and kept forever. */
export const UserId = Schema.String.check(Schema.isPattern(USER_ID_PATTERN)).pipe(Schema.brand("UserId"))
/** The stable id of a user. */
export type UserId = typeof UserId.Type

/** A user of native phone sign-in. */
export const User = Schema.Struct({
  id: UserId,
  phone: PhoneE164,
  /** Epoch milliseconds of the first successful verification. */
  createdAt: Schema.Number
})
/** A user of native phone sign-in. */
export type User = typeof User.Type

/** The users of native phone sign-in, one per phone number. */
export class UserStore extends Context.Service<
  UserStore,
  {
    /** The user of `phone`; if there is none, `candidate` becomes it, atomically (concurrent callers get one user). */
    readonly findOrCreate: (candidate: User) => Effect.Effect<User, StoreUnavailable>
    /** The user with this id, if any. */
    readonly findById: (id: UserId) => Effect.Effect<User | undefined, StoreUnavailable>
  }
>()("@walletgate/core/UserStore") {
  /** Users in this process's memory: lost on restart; for development, tests and one instance. */
  static readonly memory: Layer.Layer<UserStore> = Layer.sync(UserStore, () => {
    const byPhone = new Map<string, User>()
    const byId = new Map<string, User>()
    return UserStore.of({
      findOrCreate: (candidate) =>
        Effect.sync(() => {
          const existing = byPhone.get(candidate.phone)
          if (existing !== undefined) return existing
          byPhone.set(candidate.phone, candidate)
          byId.set(candidate.id, candidate)
          return candidate
        }),
      findById: (id) => Effect.sync(() => byId.get(id))
    })
  })
}
