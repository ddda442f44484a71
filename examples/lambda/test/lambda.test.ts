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
})
