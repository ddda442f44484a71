// How Express mounts walletgate; what every mounting must answer is the core's one adapter suite.
import { conformanceChecks, httpMount } from "@walletgate/core/testing"
import { walletgate } from "@walletgate/express"
import express from "express"
import { describe, expect, it } from "vitest"

const mounts = [
  httpMount("mounted at the root", (gateway) => express().use(walletgate(gateway))),
  httpMount("under /wallet", (gateway) => express().use("/wallet", walletgate(gateway)), { under: "/wallet" }),
  // The gateway's own base path, the middleware at the root, the host's other routes beside it.
  httpMount(
    "under the gateway's basePath /wallet",
    (gateway) =>
      express()
        .use(walletgate(gateway))
        .get("/other", (_req, res) => {
          res.send("host")
        }),
    { basePath: "/wallet" }
  ),
  // The host parses JSON itself but leaves other media types (and bad bodies) to walletgate. Bodies the host parser
  // already rejects never reach walletgate; that is the host's choice.
  httpMount(
    "behind the host's express.json()",
    (gateway) => express().use("/wallet", express.json({ limit: "1mb" }), walletgate(gateway)),
    { under: "/wallet", hostOwned: ["malformed JSON", "not UTF-8", "over the limit"] }
  )
]

describe("conformance: Express", () => {
  for (const check of conformanceChecks(mounts)) {
    it(check.name, async () => {
      expect(await check.run()).toEqual([])
    })
  }
})
