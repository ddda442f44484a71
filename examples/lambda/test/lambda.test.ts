import { spawn } from "node:child_process"
import { once } from "node:events"
import { readdir } from "node:fs/promises"
import { fileURLToPath } from "node:url"
import type { LambdaHttpResult } from "@walletgate/lambda"
import { describe, expect, it } from "vitest"
import { buildHandler } from "../scripts/build"

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url))

/**
 * Measured at 754 KiB (README), then 1,255,384 bytes once payouts build Safe accounts: the Safe registries of
 * `@safe-global/safe-deployments` and `-modules-deployments` (the canonical addresses) are bundled with them. The
 * bound leaves room for growth and fails on a bundling accident.
 */
const MAX_BUNDLE_BYTES = 1536 * 1024

describe("examples/lambda", () => {
  it("bundles the handler into one file, and the bundle answers an HTTP API v2 sign-in in a fresh process", async () => {
    const size = await buildHandler()
    expect(await readdir(here("../build"))).toEqual(["handler.mjs"])
    expect(size).toBeGreaterThan(0)
    expect(size).toBeLessThan(MAX_BUNDLE_BYTES)

    const child = spawn(process.execPath, [here("../scripts/invoke.ts"), here("../events/sign-in.json")], {
      env: { PATH: process.env.PATH ?? "" },
      stdio: ["ignore", "pipe", "inherit"]
    })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString()
    })
    try {
      const [code] = await once(child, "exit")
      expect(code).toBe(0)
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    }
    const result = JSON.parse(output.trim().split("\n").at(-1) ?? "") as LambdaHttpResult
    expect(result).toMatchObject({ statusCode: 200, headers: { "content-type": "application/json" } })
    expect(JSON.parse(result.body)).toEqual({ sent: true, expires_in: 300, resend_after: 60 })
  })

  it("fails the cold start with an Error naming a malformed WALLETGATE_SIGNING_KEY, never showing the key", async () => {
    // The bundle the test above built; a key that is PEM-shaped but no key.
    const secret = "c2VjcmV0LWtleS1tYXRlcmlhbC10aGF0LW11c3QtbmV2ZXItYmUtcHJpbnRlZA"
    const child = spawn(process.execPath, [here("../scripts/invoke.ts"), here("../events/sign-in.json")], {
      env: {
        PATH: process.env.PATH ?? "",
        WALLETGATE_SIGNING_KEY: `-----BEGIN PRIVATE KEY-----\n${secret}\n-----END PRIVATE KEY-----`
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString()
    })
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString()
    })
    const [code] = await once(child, "exit")
    expect(code).not.toBe(0)
    // Node prints an uncaught Error with its name and message (Lambda's runtime reports errorType and the trace).
    // (The bundle is minified: Node shows the class's short name, then `[ConfigurationError]`.)
    expect(output).toMatch(/ConfigurationError\]?: WALLETGATE_SIGNING_KEY is not an Ed25519 private key in PKCS#8 PEM/)
    expect(output).not.toContain(secret)
  })

  it("fails the cold start with an Error naming TWILIO_ACCOUNT_SID when WALLETGATE_SMS=twilio has none", async () => {
    const child = spawn(process.execPath, [here("../scripts/invoke.ts"), here("../events/sign-in.json")], {
      env: { PATH: process.env.PATH ?? "", WALLETGATE_SMS: "twilio", TWILIO_AUTH_TOKEN: "twilio-token-never-shown" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString()
    })
    const [code] = await once(child, "exit")
    expect(code).not.toBe(0)
    expect(output).toMatch(/ConfigurationError\]?: TWILIO_ACCOUNT_SID is not set \(WALLETGATE_SMS=twilio needs it\)/)
    expect(output).not.toContain("twilio-token-never-shown")
  })
})
