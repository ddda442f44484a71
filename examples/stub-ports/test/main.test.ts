import { spawn } from "node:child_process"
import { once } from "node:events"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const main = fileURLToPath(new URL("../src/main.ts", import.meta.url))

describe("examples/stub-ports: node src/main.ts", () => {
  it("runs the sign-in use case once, in process, and exits", async () => {
    const child = spawn(process.execPath, [main], {
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
    const result = JSON.parse(output.trim().split("\n").at(-1) ?? "") as { firstSignIn: boolean; profile: object }
    expect(result).toMatchObject({ firstSignIn: true, profile: { phone: "+15005550006", displayName: "Ada" } })
  })
})
