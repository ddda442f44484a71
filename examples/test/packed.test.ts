import { execFile, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const PACKAGES = ["core", "adapter-express", "adapter-koa", "adapter-lambda", "store-redis"]
/** Registry dependencies the consumer adds itself, at the versions installed here (so the npm cache has them). */
const REGISTRY = ["effect", "viem", "express"]

const versionOf = (name: string): string =>
  (JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")) as { version: string }).version

/** The README's quick start: the code block after "Save this as `server.mjs`", as the reader copies it. */
const QUICK_START = (() => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8")
  const after = readme.slice(readme.indexOf("Save this as `server.mjs`"))
  const block = /```ts\n([\s\S]*?)```/.exec(after)?.[1]
  if (block === undefined) throw new Error("no quick start after 'Save this as `server.mjs`' in README.md")
  return block
})()

/** The same quick start for a CommonJS project: each `import` a `require()`. */
const commonJs = (source: string): string =>
  source
    .replace(/^import \{ (\w+) \} from "([^"]+)"$/gm, 'const { $1 } = require("$2")')
    .replace(/^import (\w+) from "([^"]+)"$/gm, 'const $1 = require("$2")')

/** Starts `file` with PORT=0, signs a phone in and verifies the code it printed; answers both statuses. */
const signInAndVerify = async (file: string): Promise<{ sent: number; verified: number }> => {
  const child = spawn(process.execPath, [file], {
    env: { PATH: process.env.PATH ?? "", PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  let errors = ""
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString()
  })
  child.stderr.on("data", (chunk: Buffer) => {
    errors += chunk.toString()
  })
  const waitFor = (pattern: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const match = output.match(pattern)
        if (match?.[1] !== undefined) resolve(match[1])
      }
      child.stdout.on("data", check)
      child.once("exit", (code) => reject(new Error(`${file} exited ${code}: ${output}${errors}`)))
      check()
    })
  try {
    const base = `http://127.0.0.1:${await waitFor(/port: (\d+)/)}/wallet/functions/v1`
    const phone = "+14155552671"
    const post = (path: string, body: unknown) =>
      fetch(`${base}/${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body)
      })
    const sent = (await post("signInWithOTP", { phone })).status
    const token = await waitFor(/code is (\d{6})/)
    const verified = (await post("verifyOTP", { phone, token })).status
    return { sent, verified }
  } finally {
    child.kill("SIGKILL")
  }
}

describe("the packed packages, installed into a fresh project", () => {
  const project = mkdtempSync(join(tmpdir(), "walletgate-packed-"))

  beforeAll(async () => {
    const packed = join(project, "packed")
    mkdirSync(packed)
    const { stdout } = await run(
      "npm",
      ["pack", "--json", "--pack-destination", packed, ...PACKAGES.flatMap((name) => ["-w", `packages/${name}`])],
      { cwd: ROOT }
    )
    const tarballs = (JSON.parse(stdout) as Array<{ name: string; filename: string }>).map(
      ({ name, filename }) => [name, `file:${join(packed, filename)}`] as const
    )
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({
        name: "walletgate-consumer",
        private: true,
        // No "type": the README says to save the quick start as server.mjs, which needs none.
        dependencies: Object.fromEntries([...tarballs, ...REGISTRY.map((name) => [name, versionOf(name)] as const)])
      })
    )
    await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts"], {
      cwd: project
    })
    writeFileSync(join(project, "server.mjs"), QUICK_START)
    // A CommonJS project inside it: its own package.json, the parent's node_modules.
    mkdirSync(join(project, "cjs"))
    writeFileSync(join(project, "cjs", "package.json"), JSON.stringify({ name: "cjs-consumer", type: "commonjs" }))
    writeFileSync(join(project, "cjs", "server.js"), commonJs(QUICK_START))
  }, 240_000)

  afterAll(() => rmSync(project, { recursive: true, force: true }))

  it("runs the README's quick start saved as server.mjs, as the README says: sign-in and verify answer 200", async () => {
    expect(await signInAndVerify(join(project, "server.mjs"))).toEqual({ sent: 200, verified: 200 })
  })

  it("runs it from CommonJS with require(): sign-in and verify answer 200", async () => {
    expect(readFileSync(join(project, "cjs", "server.js"), "utf8")).toContain('require("@walletgate/core")')
    expect(await signInAndVerify(join(project, "cjs", "server.js"))).toEqual({ sent: 200, verified: 200 })
  })
})
