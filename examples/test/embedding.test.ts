import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

// The Express and Koa embedding examples promise the same behaviour, so one suite runs against both.
const ADMIN_KEY = "test-admin-key"
// Sent inside malformed bodies: it must never reach the example's log.
const RAW_BODY_MARKER = "RAW_BODY_secret_0x5eed"

/** The URL the example prints once it listens; rejects with its output if it exits first. */
const listeningUrl = (process: ChildProcess, log: (chunk: string) => void) =>
  new Promise<string>((resolve, reject) => {
    let output = ""
    const collect = (chunk: Buffer) => {
      output += chunk.toString()
      log(chunk.toString())
      const url = output.match(/listening on (http:\/\/\S+)/)?.[1]
      if (url !== undefined) resolve(url)
    }
    process.stdout?.on("data", collect)
    process.stderr?.on("data", collect)
    process.once("exit", (code) => reject(new Error(`exited with ${code}:\n${output}`)))
  })

for (const example of ["express-embed", "koa-embed"]) {
  describe(`examples/${example}`, () => {
    const source = fileURLToPath(new URL(`../${example}/src/server.ts`, import.meta.url))
    let child: ChildProcess
    let base = ""
    let output = ""
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${base}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: typeof body === "string" ? body : JSON.stringify(body)
      })

    beforeAll(async () => {
      child = spawn(process.execPath, [source], {
        env: { PATH: process.env.PATH ?? "", PORT: "0", ADMIN_API_KEY: ADMIN_KEY },
        stdio: ["ignore", "pipe", "pipe"]
      })
      base = await listeningUrl(child, (chunk) => {
        output += chunk
      })
    })

    afterAll(async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill("SIGKILL")
      await once(child, "exit")
    })

    it("keeps the host's routes, its body parser and its API key on /admin", async () => {
      expect(await (await fetch(`${base}/health`)).json()).toEqual({ ok: true })
      expect((await post("/notes", { text: "hello" })).status).toBe(201)
      expect((await fetch(`${base}/admin/notes`)).status).toBe(401)
      expect((await fetch(`${base}/admin/notes`, { headers: { "x-api-key": "wrong" } })).status).toBe(401)
      const admin = await fetch(`${base}/admin/notes`, { headers: { "x-api-key": ADMIN_KEY } })
      expect(await admin.json()).toEqual({ notes: ["hello"] })
    })

    it("signs in under /wallet with the test phone, without the host's API key", async () => {
      const sent = await post("/wallet/functions/v1/signInWithOTP", { phone: "+1 500 555 0006" })
      expect(sent.status).toBe(200)
      expect(await sent.json()).toEqual({ sent: true, expires_in: 300, resend_after: 60 })

      const verified = await post("/wallet/functions/v1/verifyOTP", { phone: "+15005550006", token: "123456" })
      expect(verified.status).toBe(200)
      expect(verified.headers.get("cache-control")).toBe("no-store")
      expect(await verified.json()).toMatchObject({ token_type: "bearer", user: { phone: "+15005550006" } })
    })

    it("answers malformed JSON under /wallet with walletgate's problem, and on the host's routes without HTML", async () => {
      const malformed = await post("/wallet/functions/v1/signInWithOTP", `{"phone": ${RAW_BODY_MARKER}}`)
      expect(malformed.status).toBe(400)
      expect(malformed.headers.get("content-type")).toMatch(/^application\/problem\+json/)
      expect(await malformed.json()).toMatchObject({ code: "invalid_json", status: 400 })

      const hostMalformed = await post("/notes", `{"text": ${RAW_BODY_MARKER}}`)
      expect(hostMalformed.status).toBe(400)
      expect(await hostMalformed.text()).not.toMatch(/<html|<pre|at |RAW_BODY/i)

      const text = await post("/wallet/functions/v1/signInWithOTP", "phone=+15005550006", {
        "content-type": "text/plain"
      })
      expect(text.status).toBe(415)
      expect(await text.json()).toMatchObject({ code: "unsupported_media_type" })
    })

    it("answers an unknown /wallet path with walletgate's 404 problem, and leaves other paths to the host", async () => {
      const unknown = await fetch(`${base}/wallet/functions/v1/nope`)
      expect(unknown.status).toBe(404)
      expect(unknown.headers.get("content-type")).toMatch(/^application\/problem\+json/)
      expect(await unknown.json()).toMatchObject({ code: "not_found", status: 404 })

      const outside = await fetch(`${base}/functions/v1/signInWithOTP`, { method: "POST" })
      expect(outside.status).toBe(404)
      expect(outside.headers.get("content-type")).not.toMatch(/problem\+json/)
    })

    it("stops on SIGTERM, having logged no request body", async () => {
      child.kill("SIGTERM")
      const [code] = await once(child, "exit")
      expect(code).toBe(0)
      expect(output).not.toContain(RAW_BODY_MARKER)
    })
  })
}
