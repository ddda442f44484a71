import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { embeddedPorts, makeGateway, SecureRandom } from "@walletgate/core"
import { apiKeyFileStore, createApiKey, revokeApiKey } from "@walletgate/core/payout"
import { apiKeyStoreContract } from "@walletgate/core/testing"
import { Effect, Layer } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { jsonCaller } from "../gatewayCall"

// The file-backed API key store (the `walletgate keys` CLI's, read by a single-instance gateway): the same port
// contract as the memory and Redis stores, each case on a file of its own; then what an attacker or a fault does
// to a gateway reading it.
const directory = mkdtempSync(join(tmpdir(), "walletgate-key-files-"))
afterAll(() => rmSync(directory, { recursive: true, force: true }))
let fresh = 0
const freshFile = () => join(directory, `keys-${++fresh}.json`)

describe("apiKeyFileStore against the ApiKeyStore contract", () => {
  for (const { name, run } of apiKeyStoreContract) {
    it(name, () => Effect.runPromise(Effect.provide(run, apiKeyFileStore(freshFile()))))
  }
})

describe("a gateway reading its API keys from a file", () => {
  const ACCOUNT = "0x00000000000000000000000000000000000000a1"
  /** Keys made as the CLI makes them, in `file`. */
  const createKeys = (file: string, count: number) =>
    Effect.runPromise(
      Effect.forEach(Array.from({ length: count }), () =>
        createApiKey({ mode: "test", networks: ["anvil"], accounts: [ACCOUNT] })
      ).pipe(Effect.provide(Layer.merge(apiKeyFileStore(file), SecureRandom.crypto)))
    )
  /** A key-authenticated read on a gateway that serves no network: 404 once the key is accepted, 401 when not. */
  const read = async (file: string, key: string) => {
    const gateway = makeGateway({ ports: Layer.mergeAll(embeddedPorts(), apiKeyFileStore(file)), loggers: [] })
    try {
      return await jsonCaller(gateway)(
        "GET",
        `/v1/anvil/account/${ACCOUNT}/payout/00000000-0000-4000-8000-000000000001`,
        undefined,
        { "x-api-key": key }
      )
    } finally {
      await gateway.dispose()
    }
  }

  it("refuses another key's secret under a key's id, and a key the CLI revoked, at once", async () => {
    const file = freshFile()
    const [alice, bob] = await createKeys(file, 2)
    if (alice === undefined || bob === undefined) throw new Error("two keys were made")
    expect((await read(file, alice.key)).status).toBe(404)
    // Alice's public id with Bob's secret part: no key at all.
    const forged = `${alice.key.slice(0, "wg_test_".length + 12)}${bob.key.slice("wg_test_".length + 12)}`
    expect(await read(file, forged)).toMatchObject({ status: 401, body: { code: "invalid_api_key" } })
    // Revoked by another process writing the file (the CLI): the gateway reads the file again on the next request.
    await Effect.runPromise(revokeApiKey(alice.record.id).pipe(Effect.provide(apiKeyFileStore(file))))
    expect(await read(file, alice.key)).toMatchObject({ status: 401, body: { code: "invalid_api_key" } })
    expect((await read(file, bob.key)).status).toBe(404)
  })

  it("answers 503 store_unavailable, never a 500 or the file's content, when the file cannot be read", async () => {
    const file = freshFile()
    const [alice] = await createKeys(file, 1)
    if (alice === undefined) throw new Error("a key was made")
    // Edited by hand and left broken: neither JSON nor key records.
    for (const broken of ['[{"id": "', JSON.stringify([{ id: alice.record.id, hash: "not a record" }])]) {
      writeFileSync(file, broken)
      const answer = await read(file, alice.key)
      expect(answer).toMatchObject({ status: 503, body: { code: "store_unavailable" } })
      expect(JSON.stringify(answer.body)).not.toContain("not a record")
    }
    // A key made while the file is broken is not written over it (the other keys would be lost): refused.
    const made = await Effect.runPromiseExit(
      createApiKey({ mode: "test", networks: [], accounts: [] }).pipe(
        Effect.provide(Layer.merge(apiKeyFileStore(file), SecureRandom.crypto))
      )
    )
    expect(made._tag).toBe("Failure")
    expect(readFileSync(file, "utf8")).toBe(JSON.stringify([{ id: alice.record.id, hash: "not a record" }]))
  })
})
