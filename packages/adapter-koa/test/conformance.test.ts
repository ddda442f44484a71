// How Koa mounts walletgate; what every mounting must answer is the core's one adapter suite.
import { conformanceChecks, httpMount } from "@walletgate/core/testing"
import { walletgate } from "@walletgate/koa"
import { describe, expect, it } from "vitest"
import { hostJsonParser, koaApp } from "./host"

const mounts = [
  httpMount("mounted at the root", (gateway) => koaApp(walletgate(gateway))),
  // Mounted: the gateway's own base path, which Koa's middleware honours.
  httpMount("under basePath /wallet", (gateway) => koaApp(walletgate(gateway)), { basePath: "/wallet" }),
  // A host parser that decodes the body as text has replaced a stray non-UTF-8 byte before walletgate sees it: that
  // case belongs to the host then, as bodies the host itself refuses do behind Express.
  httpMount(
    "behind the host's JSON body parser",
    (gateway) => koaApp(hostJsonParser({ keepRaw: true }), walletgate(gateway)),
    { basePath: "/wallet", hostOwned: ["not UTF-8 is 400"] }
  )
]

describe("conformance: Koa", () => {
  for (const check of conformanceChecks(mounts)) {
    it(check.name, async () => {
      expect(await check.run()).toEqual([])
    })
  }
})
