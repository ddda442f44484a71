import * as Effect from "effect/Effect"
import {
  type IdempotencyClaim,
  IdempotencyStore,
  type LinkedOperation,
  type StoredReply
} from "../../state/IdempotencyStore"
import { concurrently, countOf, expectEqual, type PortContractCase, T0 } from "./contract"

const KEY = "kernel:wgc_app:order-7"
const OTHER_KEY = "kernel:wgc_app:order-8"
/** Stand-ins for request fingerprints: 64 hex digits, as `idempotent` makes them. */
const fingerprint = (n: number) => n.toString(16).padStart(64, "0")
const REQUEST = fingerprint(1)
const OTHER_REQUEST = fingerprint(2)
/** The lease of a claim; records linked or completed are kept `TTL`. */
const TTL = 1000
const LEASE = TTL
const DAY = 86_400_000
const OPERATION: LinkedOperation = { id: "tx-1", txHash: `0x${"cd".repeat(32)}` }
const REPLY: StoredReply = {
  status: 200,
  body: { id: "tx-1", txHash: `0x${"ab".repeat(32)}`, transfers: [], nested: { list: [1, "two", null] }, note: null }
}
const OTHER_REPLY: StoredReply = { status: 201, body: "another answer" }
const IN_FLIGHT = { _tag: "InFlight" } as const
const MISMATCH = { _tag: "Mismatch" } as const
const completed = (reply: StoredReply) => ({ _tag: "Completed", reply }) as const
const linked = (owner: string, running: boolean) => ({ _tag: "Linked", owner, operation: OPERATION, running }) as const

/** The owner token of a claim that must have been `Claimed`; dies naming `what` otherwise. */
const ownerOf = (what: string, claim: IdempotencyClaim): Effect.Effect<string> =>
  claim._tag === "Claimed" && typeof claim.owner === "string" && claim.owner.length > 0
    ? Effect.succeed(claim.owner)
    : Effect.die(new Error(`${what}: expected Claimed with an owner token, got ${JSON.stringify(claim)}`))

const idempotencyCase = (
  name: string,
  run: (store: IdempotencyStore["Service"]) => Effect.Effect<void, unknown>
): PortContractCase<IdempotencyStore> => ({ name, run: IdempotencyStore.use(run) })

/** The contract of `IdempotencyStore` (docs/security.md): every implementation must pass every case. */
export const idempotencyStoreContract: ReadonlyArray<PortContractCase<IdempotencyStore>> = [
  idempotencyCase("claims a new key, then replays its answer to the same request", (store) =>
    Effect.gen(function* () {
      const owner = yield* ownerOf("first claim", yield* store.claim(KEY, REQUEST, T0, TTL))
      yield* store.complete(KEY, owner, REPLY, T0 + 1, TTL)
      yield* expectEqual("claim after completion", yield* store.claim(KEY, REQUEST, T0 + 2, TTL), completed(REPLY))
    })
  ),
  idempotencyCase("reports a claimed key in flight to the same request until it completes", (store) =>
    Effect.gen(function* () {
      yield* ownerOf("first claim", yield* store.claim(KEY, REQUEST, T0, TTL))
      yield* expectEqual("second claim", yield* store.claim(KEY, REQUEST, T0 + 1, TTL), IN_FLIGHT)
    })
  ),
  idempotencyCase("refuses another request with the key, in flight and completed", (store) =>
    Effect.gen(function* () {
      const owner = yield* ownerOf("first claim", yield* store.claim(KEY, REQUEST, T0, TTL))
      yield* expectEqual("in flight", yield* store.claim(KEY, OTHER_REQUEST, T0 + 1, TTL), MISMATCH)
      yield* store.complete(KEY, owner, REPLY, T0 + 2, TTL)
      yield* expectEqual("completed", yield* store.claim(KEY, OTHER_REQUEST, T0 + 3, TTL), MISMATCH)
    })
  ),
  idempotencyCase("keeps the answer exactly, whatever JSON its body is", (store) =>
    Effect.gen(function* () {
      const bodies: ReadonlyArray<unknown> = [{ a: [], b: {}, c: [{ d: "é ✓" }] }, [], "text", 0, null, true]
      yield* Effect.forEach(bodies, (body, i) =>
        Effect.gen(function* () {
          const key = `${KEY}:${i}`
          const owner = yield* ownerOf("claim", yield* store.claim(key, REQUEST, T0, TTL))
          yield* store.complete(key, owner, { status: 200 + i, body }, T0 + 1, TTL)
          const replayed = yield* store.claim(key, REQUEST, T0 + 2, TTL)
          yield* expectEqual(`replay ${i}`, replayed, completed({ status: 200 + i, body }))
        })
      )
    })
  ),
  idempotencyCase("lets a retry claim a released key, with a new owner token", (store) =>
    Effect.gen(function* () {
      const first = yield* ownerOf("first claim", yield* store.claim(KEY, REQUEST, T0, TTL))
      yield* store.release(KEY, first)
      const second = yield* ownerOf("claim after release", yield* store.claim(KEY, REQUEST, T0 + 1, TTL))
      yield* expectEqual("new owner token", second === first, false)
    })
  ),
  idempotencyCase("lets another request claim a released key", (store) =>
    Effect.gen(function* () {
      const owner = yield* ownerOf("first claim", yield* store.claim(KEY, REQUEST, T0, TTL))
      yield* store.release(KEY, owner)
      yield* ownerOf("other request", yield* store.claim(KEY, OTHER_REQUEST, T0 + 1, TTL))
    })
  ),
  idempotencyCase("keeps a completed answer when its owner releases the key", (store) =>
    Effect.gen(function* () {
      const owner = yield* ownerOf("first claim", yield* store.claim(KEY, REQUEST, T0, TTL))
      yield* store.complete(KEY, owner, REPLY, T0 + 1, TTL)
      yield* store.release(KEY, owner)
      yield* expectEqual("claim", yield* store.claim(KEY, REQUEST, T0 + 2, TTL), completed(REPLY))
    })
  ),
  idempotencyCase("ignores complete and release with a token that does not own the claim", (store) =>
    Effect.gen(function* () {
      const owner = yield* ownerOf("first claim", yield* store.claim(KEY, REQUEST, T0, TTL))
      yield* store.complete(KEY, `${owner}-not`, OTHER_REPLY, T0 + 1, TTL)
      yield* store.release(KEY, `${owner}-not`)
      yield* expectEqual("claim", yield* store.claim(KEY, REQUEST, T0 + 2, TTL), IN_FLIGHT)
      yield* store.complete(KEY, owner, REPLY, T0 + 3, TTL)
      yield* expectEqual("after the owner completes", yield* store.claim(KEY, REQUEST, T0 + 4, TTL), completed(REPLY))
    })
  ),
  idempotencyCase("ignores complete and release of an unclaimed key", (store) =>
    Effect.gen(function* () {
      yield* store.complete(KEY, "nobody", REPLY, T0, TTL)
      yield* store.release(KEY, "nobody")
      yield* ownerOf("claim", yield* store.claim(KEY, REQUEST, T0 + 1, TTL))
    })
  ),
  idempotencyCase("lets a claim that linked nothing expire when its lease ends", (store) =>
    Effect.gen(function* () {
      const first = yield* ownerOf("first claim", yield* store.claim(KEY, REQUEST, T0, TTL))
      yield* expectEqual("just before expiry", yield* store.claim(KEY, REQUEST, T0 + TTL - 1, TTL), IN_FLIGHT)
      const second = yield* ownerOf("at expiry", yield* store.claim(KEY, OTHER_REQUEST, T0 + TTL, TTL))
      yield* expectEqual("new owner token", second === first, false)
    })
  ),
  idempotencyCase("keeps a completed answer ttlMs from its completion", (store) =>
    Effect.gen(function* () {
      const owner = yield* ownerOf("first claim", yield* store.claim(KEY, REQUEST, T0, TTL))
      yield* store.complete(KEY, owner, REPLY, T0 + 500, TTL)
      const late = yield* store.claim(KEY, REQUEST, T0 + 500 + TTL - 1, TTL)
      yield* expectEqual("just before expiry", late, completed(REPLY))
      yield* ownerOf("at expiry", yield* store.claim(KEY, REQUEST, T0 + 500 + TTL, TTL))
    })
  ),
  idempotencyCase("ignores the owner of an expired claim once the key is claimed again", (store) =>
    Effect.gen(function* () {
      const stale = yield* ownerOf("first claim", yield* store.claim(KEY, REQUEST, T0, TTL))
      const current = yield* ownerOf("claim after expiry", yield* store.claim(KEY, REQUEST, T0 + TTL, TTL))
      yield* store.complete(KEY, stale, OTHER_REPLY, T0 + TTL + 1, TTL)
      yield* store.release(KEY, stale)
      yield* expectEqual("current claim", yield* store.claim(KEY, REQUEST, T0 + TTL + 2, TTL), IN_FLIGHT)
      yield* store.complete(KEY, current, REPLY, T0 + TTL + 3, TTL)
      yield* expectEqual("answer", yield* store.claim(KEY, REQUEST, T0 + TTL + 4, TTL), completed(REPLY))
    })
  ),
  idempotencyCase("ignores the owner of an expired claim that nobody claimed again", (store) =>
    Effect.gen(function* () {
      const owner = yield* ownerOf("first claim", yield* store.claim(KEY, REQUEST, T0, TTL))
      yield* store.complete(KEY, owner, REPLY, T0 + TTL, TTL)
      yield* ownerOf("claim after expiry", yield* store.claim(KEY, REQUEST, T0 + TTL + 1, TTL))
    })
  ),
  idempotencyCase("keeps keys apart", (store) =>
    Effect.gen(function* () {
      const owner = yield* ownerOf("first key", yield* store.claim(KEY, REQUEST, T0, TTL))
      yield* ownerOf("other key, same request", yield* store.claim(OTHER_KEY, REQUEST, T0, TTL))
      yield* store.complete(KEY, owner, REPLY, T0 + 1, TTL)
      yield* expectEqual("other key", yield* store.claim(OTHER_KEY, REQUEST, T0 + 2, TTL), IN_FLIGHT)
      yield* store.release(OTHER_KEY, owner)
      yield* expectEqual("other key again", yield* store.claim(OTHER_KEY, REQUEST, T0 + 3, TTL), IN_FLIGHT)
    })
  ),
  idempotencyCase("gives every claim its own owner token", (store) =>
    Effect.gen(function* () {
      const claims = yield* concurrently(20, (i) => store.claim(`${KEY}:${i}`, REQUEST, T0, TTL))
      const owners = yield* Effect.forEach(claims, (claim) => ownerOf("claim", claim))
      yield* expectEqual("distinct tokens", new Set(owners).size, 20)
    })
  ),
  idempotencyCase("gives exactly one of 20 concurrent claims of one key the claim", (store) =>
    Effect.gen(function* () {
      const claims = yield* concurrently(20, () => store.claim(KEY, REQUEST, T0, TTL))
      yield* expectEqual(
        "claimed",
        countOf(
          claims.map((claim) => claim._tag),
          "Claimed"
        ),
        1
      )
      yield* expectEqual("in flight", countOf(claims, IN_FLIGHT), 19)
    })
  ),
  idempotencyCase("gives exactly one of 20 concurrent claims with different requests the claim", (store) =>
    Effect.gen(function* () {
      const claims = yield* concurrently(20, (i) => store.claim(KEY, fingerprint(100 + i), T0, TTL))
      yield* expectEqual(
        "claimed",
        countOf(
          claims.map((claim) => claim._tag),
          "Claimed"
        ),
        1
      )
      yield* expectEqual("mismatch", countOf(claims, MISMATCH), 19)
    })
  ),
  idempotencyCase("gives exactly one of 20 concurrent claims of an expired key the claim", (store) =>
    Effect.gen(function* () {
      const stale = yield* ownerOf("first claim", yield* store.claim(KEY, REQUEST, T0, TTL))
      const claims = yield* concurrently(20, () => store.claim(KEY, REQUEST, T0 + TTL, TTL))
      const owners = claims.flatMap((claim) => (claim._tag === "Claimed" ? [claim.owner] : []))
      yield* expectEqual("claimed", owners.length, 1)
      yield* expectEqual("by a new owner", owners.includes(stale), false)
    })
  ),
  idempotencyCase("links the owner's claim to its operation, reported while its lease runs and after", (store) =>
    Effect.gen(function* () {
      const owner = yield* ownerOf("first claim", yield* store.claim(KEY, REQUEST, T0, LEASE))
      yield* expectEqual("link", yield* store.link(KEY, owner, OPERATION, T0 + 1, DAY), true)
      yield* expectEqual("during the lease", yield* store.claim(KEY, REQUEST, T0 + 2, LEASE), linked(owner, true))
      // Linked, the key outlives its lease: a retry a day later still finds the operation, never runs again.
      const late = yield* store.claim(KEY, REQUEST, T0 + LEASE + 1, LEASE)
      yield* expectEqual("after the lease", late, linked(owner, false))
      yield* expectEqual(
        "a day after the link",
        yield* store.claim(KEY, REQUEST, T0 + DAY, LEASE),
        linked(owner, false)
      )
      yield* expectEqual("another request", yield* store.claim(KEY, OTHER_REQUEST, T0 + 3, LEASE), MISMATCH)
    })
  ),
  idempotencyCase("stores the answer of a linked claim, and keeps it ttlMs from its completion", (store) =>
    Effect.gen(function* () {
      const owner = yield* ownerOf("first claim", yield* store.claim(KEY, REQUEST, T0, LEASE))
      yield* store.link(KEY, owner, OPERATION, T0 + 1, TTL)
      yield* store.complete(KEY, owner, REPLY, T0 + 500, TTL)
      yield* expectEqual("replay", yield* store.claim(KEY, REQUEST, T0 + 500 + TTL - 1, LEASE), completed(REPLY))
    })
  ),
  idempotencyCase(
    "refuses to link a claim that is not the caller's, expired, linked to another record or completed",
    (store) =>
      Effect.gen(function* () {
        const owner = yield* ownerOf("first claim", yield* store.claim(KEY, REQUEST, T0, LEASE))
        yield* expectEqual("another token", yield* store.link(KEY, `${owner}-not`, OPERATION, T0 + 1, DAY), false)
        yield* expectEqual("still in flight", yield* store.claim(KEY, REQUEST, T0 + 2, LEASE), IN_FLIGHT)
        yield* expectEqual("first link", yield* store.link(KEY, owner, OPERATION, T0 + 3, DAY), true)
        const other = { id: "tx-2", txHash: OPERATION.txHash }
        yield* expectEqual("second link", yield* store.link(KEY, owner, other, T0 + 4, DAY), false)
        yield* expectEqual("first operation kept", yield* store.claim(KEY, REQUEST, T0 + 5, LEASE), linked(owner, true))

        const done = yield* ownerOf("other key", yield* store.claim(OTHER_KEY, REQUEST, T0, LEASE))
        yield* store.complete(OTHER_KEY, done, REPLY, T0 + 1, TTL)
        yield* expectEqual("completed", yield* store.link(OTHER_KEY, done, OPERATION, T0 + 2, DAY), false)
        yield* expectEqual("never linked", yield* store.link(`${KEY}:none`, done, OPERATION, T0, DAY), false)
      })
  ),
  idempotencyCase("links the owner's claim again to the same record, its hash replaced (signed again)", (store) =>
    Effect.gen(function* () {
      const owner = yield* ownerOf("first claim", yield* store.claim(KEY, REQUEST, T0, LEASE))
      yield* expectEqual("first link", yield* store.link(KEY, owner, OPERATION, T0 + 1, DAY), true)
      const resigned: LinkedOperation = { id: OPERATION.id, txHash: `0x${"ef".repeat(32)}` }
      yield* expectEqual("by another token", yield* store.link(KEY, `${owner}-not`, resigned, T0 + 2, DAY), false)
      yield* expectEqual("same record", yield* store.link(KEY, owner, resigned, T0 + 3, DAY), true)
      yield* expectEqual("its hash replaced", yield* store.claim(KEY, REQUEST, T0 + 4, LEASE), {
        _tag: "Linked",
        owner,
        operation: resigned,
        running: true
      })
      yield* store.complete(KEY, owner, REPLY, T0 + 5, TTL)
      yield* expectEqual("once completed", yield* store.link(KEY, owner, OPERATION, T0 + 6, DAY), false)
      yield* expectEqual("answer kept", yield* store.claim(KEY, REQUEST, T0 + 7, LEASE), completed(REPLY))
    })
  ),
  idempotencyCase(
    "fences the owner of an expired lease: it can no longer link once the key is claimed again",
    (store) =>
      Effect.gen(function* () {
        const stale = yield* ownerOf("first claim", yield* store.claim(KEY, REQUEST, T0, LEASE))
        yield* expectEqual("expired, unclaimed", yield* store.link(KEY, stale, OPERATION, T0 + LEASE, DAY), false)
        const current = yield* ownerOf("claim after the lease", yield* store.claim(KEY, REQUEST, T0 + LEASE, LEASE))
        yield* expectEqual("stale link", yield* store.link(KEY, stale, OPERATION, T0 + LEASE + 1, DAY), false)
        yield* expectEqual("current link", yield* store.link(KEY, current, OPERATION, T0 + LEASE + 2, DAY), true)
      })
  ),
  idempotencyCase("lets the owner give up a linked claim whose operation sent nothing", (store) =>
    Effect.gen(function* () {
      const owner = yield* ownerOf("first claim", yield* store.claim(KEY, REQUEST, T0, LEASE))
      yield* store.link(KEY, owner, OPERATION, T0 + 1, DAY)
      yield* store.release(KEY, `${owner}-not`)
      yield* expectEqual("not by another token", yield* store.claim(KEY, REQUEST, T0 + 2, LEASE), linked(owner, true))
      yield* store.release(KEY, owner)
      yield* ownerOf("claim after release", yield* store.claim(KEY, REQUEST, T0 + 3, LEASE))
    })
  ),
  idempotencyCase("links exactly one of 20 concurrent links of one claim", (store) =>
    Effect.gen(function* () {
      const owner = yield* ownerOf("first claim", yield* store.claim(KEY, REQUEST, T0, LEASE))
      const links = yield* concurrently(20, (i) => store.link(KEY, owner, { ...OPERATION, id: `tx-${i}` }, T0 + 1, DAY))
      yield* expectEqual("linked", countOf(links, true), 1)
    })
  )
]
