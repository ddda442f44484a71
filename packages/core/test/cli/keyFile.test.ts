import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { embeddedPorts, makeGateway, SecureRandom } from "@walletgate/core"
import { apiKeyFileStore } from "@walletgate/core/payout"
import { Effect, Layer } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { makeApiKey } from "../../src/payout/ApiKeys"

// The CLI as operators run it: the built bin of @walletgate/core (`npm test` builds before testing).
const cli = fileURLToPath(new URL("../../dist/cli.js", import.meta.url))
const folder = mkdtempSync(join(tmpdir(), "walletgate-keys-"))
const file = join(folder, "keys.json")
afterAll(() => rmSync(folder, { recursive: true, force: true }))

const walletgate = (...args: Array<string>) => {
  try {
    return {
      status: 0,
      output: execFileSync(process.execPath, [cli, "--file", file, ...args], { encoding: "utf8", stdio: "pipe" })
    }
  } catch (error) {
    const failed = error as { status: number; stderr: string }
    return { status: failed.status, output: failed.stderr }
  }
}

const ACCOUNT = "0x000000000000000000000000000000000000dEaD"

describe("walletgate keys (CLI)", () => {
  it("creates a key shown once and stored hashed, lists it without the key, and revokes it", async () => {
    const created = walletgate("keys", "create", "--network", "anvil", "--account", ACCOUNT, "--mode", "test")
    expect(created.status).toBe(0)
    const key = created.output.match(/^(wg_test_\S+)$/m)?.[1] as string
    expect(key).toMatch(/^wg_test_[A-Za-z0-9_-]{44}$/)
    const id = key.slice(8, 20)
    expect(readFileSync(file, "utf8")).not.toContain(key.slice(20))

    const listed = walletgate("keys", "list")
    expect(listed.output).toContain(`${id}  test  active`)
    expect(listed.output).not.toContain(key.slice(20))

    // A gateway reading the same file accepts the key (this gateway serves no network: 404, not 401)…
    const gateway = makeGateway({ ports: Layer.mergeAll(embeddedPorts(), apiKeyFileStore(file)), loggers: [] })
    const pay = () =>
      gateway.fetch(
        new Request(`http://gateway.test/v1/anvil/account/${ACCOUNT}/payout/disperse`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": key },
          body: "{}"
        })
      )
    expect(((await (await pay()).json()) as { code: string }).code).toBe("unknown_network")
    expect(walletgate("keys", "list").output).toMatch(/last used 20\d\d-/)

    // …until it is revoked.
    expect(walletgate("keys", "revoke", id).status).toBe(0)
    expect(((await (await pay()).json()) as { code: string }).code).toBe("invalid_api_key")
    expect(walletgate("keys", "revoke", id)).toMatchObject({ status: 1 })
    await gateway.dispose()
  })

  it("names the key file it cannot read, never its content, and writes nothing over it", () => {
    const kept = readFileSync(file, "utf8")
    writeFileSync(file, '[{"id": "')
    for (const args of [
      ["keys", "list"],
      ["keys", "create", "--network", "anvil", "--account", ACCOUNT]
    ]) {
      const failed = walletgate(...args)
      expect(failed.status).toBe(1)
      expect(failed.output).toBe(
        `walletgate: ${file} cannot be read or written as a key file (a JSON array of key records)\n`
      )
    }
    expect(readFileSync(file, "utf8")).toBe('[{"id": "')
    writeFileSync(file, kept)
  })

  it('revokes a key whose id begins with "-" after `--` (ids made today never begin with it)', () => {
    const record = {
      id: "-dashFirst01",
      mode: "test",
      hash: "0".repeat(64),
      networks: ["anvil"],
      accounts: [ACCOUNT.toLowerCase()],
      createdAt: 0
    }
    const before = JSON.parse(readFileSync(file, "utf8")) as Array<unknown>
    writeFileSync(file, JSON.stringify([...before, record]))
    expect(walletgate("keys", "revoke", "--", record.id)).toMatchObject({ status: 0 })
    expect(walletgate("keys", "list").output).toMatch(/-dashFirst01 {2}test {2}revoked/)
  })

  it('never makes a key id that begins with "-": a draw that would is drawn again', () => {
    // 0xf8 bytes encode as base64url "-" first; the second draw (zeros) does not.
    const draws = [new Uint8Array(33).fill(0xf8), new Uint8Array(33)]
    const random = Layer.succeed(
      SecureRandom,
      SecureRandom.of({ bytes: () => Effect.sync(() => draws.shift() ?? new Uint8Array(33)) })
    )
    const made = Effect.runSync(
      makeApiKey({ mode: "test", networks: ["anvil"], accounts: [ACCOUNT] }).pipe(Effect.provide(random))
    )
    expect(made.record.id).toBe("AAAAAAAAAAAA")
    expect(draws).toEqual([])
  })

  it("refuses bad input with a message and exit code 1", () => {
    expect(walletgate("keys", "create", "--account", ACCOUNT)).toMatchObject({
      status: 1,
      output: expect.stringContaining("--network is required")
    })
    expect(walletgate("keys", "create", "--network", "anvil", "--account", "0x12")).toMatchObject({ status: 1 })
    expect(walletgate("keys", "create", "--network", "anvil", "--account", ACCOUNT, "--mode", "prod")).toMatchObject({
      status: 1
    })
    expect(walletgate("nonsense")).toMatchObject({ status: 1, output: expect.stringContaining("usage:") })
    expect(walletgate("frob").output).toMatch(/^walletgate: unknown command "frob"\n/)
    expect(walletgate("keys", "frob").output).toMatch(/^walletgate: unknown command "keys frob"/)
  })
})

describe("walletgate providers check (CLI)", () => {
  const providersFile = join(folder, "providers.json")
  const check = (entries: unknown) => {
    writeFileSync(providersFile, JSON.stringify(entries))
    try {
      return {
        status: 0,
        output: execFileSync(process.execPath, [cli, "providers", "check", providersFile], { encoding: "utf8" })
      }
    } catch (error) {
      const failed = error as { status: number; stderr: string }
      return { status: failed.status, output: failed.stderr }
    }
  }
  const acme = {
    name: "acme",
    issuer: "https://id.acme.example/",
    audience: "walletgate",
    jwksUrl: "https://id.acme.example/jwks.json",
    algorithms: ["RS256"]
  }

  it("lists the registry a gateway would build from the file", () => {
    const checked = check([acme])
    expect(checked.status).toBe(0)
    expect(checked.output).toContain("phone  the native phone sign-in (built in)")
    expect(checked.output).toContain("acme  https://id.acme.example/  aud walletgate  RS256  id claim sub")
  })

  it("refuses a reserved or repeated name, and an entry that is not a sound verifier, with exit code 1", () => {
    expect(check([{ ...acme, name: "tel" }])).toMatchObject({
      status: 1,
      output: expect.stringContaining('"tel" is reserved by walletgate')
    })
    expect(check([acme, acme])).toMatchObject({ status: 1, output: expect.stringContaining("already registered") })
    expect(check([{ ...acme, jwksUrl: "http://id.acme.example/jwks.json" }])).toMatchObject({
      status: 1,
      output: expect.stringContaining("Expected an https URL")
    })
    expect(check({ acme })).toMatchObject({ status: 1, output: expect.stringContaining("expected a JSON array") })
  })
})

describe("walletgate --help (CLI)", () => {
  // Eleven CLI processes one after another: about 2 s each on an idle machine, over 30 s on a loaded one.
  it("answers --help for itself and for each command, on stdout with status 0, and runs nothing", {
    timeout: 120_000
  }, () => {
    const before = (() => {
      try {
        return readFileSync(file, "utf8")
      } catch {
        return ""
      }
    })()
    const topics: Array<[args: ReadonlyArray<string>, says: string]> = [
      [["--help"], "walletgate keys create"],
      [["-h"], "walletgate providers check"],
      [["help"], "walletgate keys list"],
      [["keys", "--help"], "walletgate keys revoke <key id>"],
      [["keys", "create", "--help"], "--mode live|test"],
      [["keys", "list", "--help"], "without the keys themselves"],
      [["keys", "revoke", "--help"], "walletgate keys revoke -- <key id>"],
      [["providers", "--help"], "walletgate providers check <file>"],
      [["providers", "check", "--help"], "exits 1 naming the first invalid entry"],
      [["help", "keys", "create"], "--account <address>"]
    ]
    for (const [args, says] of topics) {
      const answer = walletgate(...args)
      expect({ args, status: answer.status }).toEqual({ args, status: 0 })
      expect(answer.output).toContain(says)
    }
    // `keys create --help` with every option given still creates nothing.
    expect(walletgate("keys", "create", "--network", "anvil", "--account", ACCOUNT, "--help").status).toBe(0)
    const after = (() => {
      try {
        return readFileSync(file, "utf8")
      } catch {
        return ""
      }
    })()
    expect(after).toBe(before)
  })

  it("exits 1 with the usage for no command and for an unknown one", () => {
    expect(walletgate()).toMatchObject({ status: 1 })
    expect(walletgate("nonsense", "--help")).toMatchObject({ status: 1, output: expect.stringContaining("usage:") })
  })
})
