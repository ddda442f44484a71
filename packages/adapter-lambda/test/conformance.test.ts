// How Lambda mounts walletgate: every kind of event, unmounted and under a base path. What each must answer is the
// core's one adapter suite; what an event kind cannot carry is in carrying.test.ts.
import { conformanceChecks } from "@walletgate/core/testing"
import { describe, expect, it } from "vitest"
import { type EventKind, eventKinds, lambdaMount } from "./events"

/**
 * The cases an event kind cannot carry: a target group without multi-value headers reads one value per name, so
 * an ALB answer there holds one `Set-Cookie` (see the adapter's README).
 */
const cannotCarry = (kind: EventKind): ReadonlyArray<string> =>
  kind === "ALB"
    ? ["two Set-Cookie fields arrive whole and apart", "HEAD of a route that sets two cookies sets them too"]
    : []

const mounts = eventKinds.flatMap((kind) =>
  ["", "/wallet"].map((base) => lambdaMount(kind, base, { hostOwned: cannotCarry(kind) }))
)

describe("conformance: Lambda", () => {
  for (const check of conformanceChecks(mounts)) {
    it(check.name, async () => {
      expect(await check.run()).toEqual([])
    })
  }
})
