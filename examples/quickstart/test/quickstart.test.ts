import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const source = fileURLToPath(new URL("../src/server.ts", import.meta.url))
const readme = fileURLToPath(new URL("../../../README.md", import.meta.url))

describe("the README quick start", () => {
  it("is this example, verbatim, in under 15 lines of code", () => {
    const code = readFileSync(source, "utf8").trim()
    expect(readFileSync(readme, "utf8")).toContain(code)
    expect(code.split("\n").filter((line) => line.trim() !== "" && !line.trim().startsWith("//")).length).toBeLessThan(
      15
    )
  })

  it("starts, answers under /wallet beside the host's routes, and stops", async () => {
    const child = spawn(process.execPath, [source], {
      env: { PATH: process.env.PATH ?? "", PORT: "0" },
      stdio: ["ignore", "pipe", "inherit"]
    })
    try {
      const port = await new Promise<number>((resolve, reject) => {
        let output = ""
        child.stdout.on("data", (chunk: Buffer) => {
          output += chunk.toString()
          const match = output.match(/port: (\d+)/)
          if (match?.[1] !== undefined) resolve(Number(match[1]))
        })
        child.once("exit", () => reject(new Error(`exited: ${output}`)))
      })
      const base = `http://127.0.0.1:${port}`
      expect((await fetch(`${base}/health`)).status).toBe(200)
      const sent = await fetch(`${base}/wallet/functions/v1/signInWithOTP`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ phone: "+14155552671" })
      })
      expect(sent.status).toBe(200)
    } finally {
      child.kill("SIGKILL")
    }
  })
})
