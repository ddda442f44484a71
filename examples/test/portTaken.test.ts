import { spawn } from "node:child_process"
import { once } from "node:events"
import { createServer, type Server } from "node:net"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

// A newcomer whose port 3000 is already taken must not be told "listening" while another program
// answers there: every runnable example exits non-zero with one line naming the port and `PORT=`.
const examples = [
  { name: "quickstart", main: "../quickstart/src/server.ts" },
  { name: "express-embed", main: "../express-embed/src/server.ts" },
  { name: "koa-embed", main: "../koa-embed/src/server.ts" },
  // The playground starts its local chain first, so it gets longer.
  { name: "playground", main: "../playground/src/main.ts" }
]

describe.concurrent("an example started on a taken port", () => {
  let occupant: Server
  let port = 0
  beforeAll(async () => {
    occupant = createServer((socket) => socket.end("someone else\n"))
    occupant.listen(0, "127.0.0.1")
    await once(occupant, "listening")
    const address = occupant.address()
    port = typeof address === "object" && address !== null ? address.port : 0
  })
  afterAll(() => {
    occupant.close()
  })

  for (const example of examples) {
    it(`examples/${example.name} exits non-zero with one line naming the port and PORT=`, async () => {
      const child = spawn(process.execPath, [fileURLToPath(new URL(example.main, import.meta.url))], {
        env: { PATH: process.env.PATH ?? "", PORT: String(port) },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString()
      })
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString()
      })
      const timer = setTimeout(() => child.kill("SIGKILL"), 60_000)
      const [code] = (await once(child, "exit")) as [number | null]
      clearTimeout(timer)
      // Exit 1 of its own, not a signal (null) nor a crash's stack.
      expect(code, `stdout:\n${stdout}\nstderr:\n${stderr}`).toBe(1)
      expect(stdout).not.toMatch(/listening/)
      const message = stderr.trim()
      expect(message.split("\n")).toHaveLength(1)
      expect(message).toContain(String(port))
      expect(message).toContain("PORT=")
    }, 90_000)
  }
})
