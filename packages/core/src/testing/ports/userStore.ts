import * as Effect from "effect/Effect"
import { PhoneE164 } from "../../auth/phone"
import { type User, UserId, UserStore } from "../../otp/UserStore"
import { countOf, expectEqual, type PortContractCase, T0 } from "./contract"

const PHONE = PhoneE164.make("+14155552671")
const OTHER = PhoneE164.make("+14169671111")
const userId = (n: number) => UserId.make(`00000000-0000-4000-8000-${String(n).padStart(12, "0")}`)
const user = (n: number, phone: PhoneE164): User => ({ id: userId(n), phone, createdAt: T0 + n })

const userCase = (name: string, run: (store: UserStore["Service"]) => Effect.Effect<void, unknown>) => ({
  name,
  run: UserStore.use(run)
})

/** The contract of `UserStore`: every implementation must pass every case. */
export const userStoreContract: ReadonlyArray<PortContractCase<UserStore>> = [
  userCase("makes the candidate the user of a new phone, findable by id", (store) =>
    Effect.gen(function* () {
      const alice = user(1, PHONE)
      yield* expectEqual("findOrCreate", yield* store.findOrCreate(alice), alice)
      yield* expectEqual("findById", yield* store.findById(alice.id), alice)
    })
  ),
  userCase("returns the existing user of a known phone and stores nothing of the new candidate", (store) =>
    Effect.gen(function* () {
      const first = user(1, PHONE)
      yield* store.findOrCreate(first)
      yield* expectEqual("second findOrCreate", yield* store.findOrCreate(user(2, PHONE)), first)
      yield* expectEqual("findById of the candidate", yield* store.findById(userId(2)), undefined)
      yield* expectEqual("findById of the user", yield* store.findById(first.id), first)
    })
  ),
  userCase("finds no user for an unknown id", (store) =>
    Effect.gen(function* () {
      yield* expectEqual("findById", yield* store.findById(userId(9)), undefined)
    })
  ),
  userCase("keeps phones apart", (store) =>
    Effect.gen(function* () {
      const alice = user(1, PHONE)
      const bob = user(2, OTHER)
      yield* store.findOrCreate(alice)
      yield* expectEqual("other phone", yield* store.findOrCreate(bob), bob)
      yield* expectEqual("findById", [yield* store.findById(alice.id), yield* store.findById(bob.id)], [alice, bob])
    })
  ),
  userCase("gives 50 concurrent first sign-ins of one phone the same user", (store) =>
    Effect.gen(function* () {
      const candidates = Array.from({ length: 50 }, (_, i) => user(i + 1, PHONE))
      const users = yield* Effect.forEach(candidates, store.findOrCreate, { concurrency: "unbounded" })
      const winner = users[0]
      yield* expectEqual("one user for all", countOf(users, winner), 50)
      yield* expectEqual("a candidate won", countOf(candidates, winner), 1)
      const found = yield* Effect.forEach(candidates, (candidate) => store.findById(candidate.id))
      yield* expectEqual("findable by id: the winner only", countOf(found, undefined), 49)
      yield* expectEqual("findById of the winner", countOf(found, winner), 1)
    })
  )
]
