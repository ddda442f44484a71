import { execFile } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { entries } from "../../tsup.config"

const run = promisify(execFile)
const DIST = fileURLToPath(new URL("../../dist", import.meta.url))

// `sideEffects: false` in package.json lets a bundler drop any module whose names it does not use. That is
// only sound if importing a module does no work: no key generation, no client or timer, nothing printed, no
// global touched. A fresh Node process imports every built entry and reports what changed.
const probe = (urls: ReadonlyArray<string>) => `
  const globals = new Set(Object.getOwnPropertyNames(globalThis))
  const resources = process.getActiveResourcesInfo().length
  for (const url of ${JSON.stringify(urls)}) await import(url)
  await new Promise((resolve) => setImmediate(resolve))
  const changed = JSON.stringify({
    globals: Object.getOwnPropertyNames(globalThis).filter((name) => !globals.has(name)),
    resources: process.getActiveResourcesInfo().slice(resources)
  })
  process.stderr.write(changed)
`

describe("importing the built core", () => {
  it("does no work: no new global, no timer or socket, nothing printed", async () => {
    // `/testing` is left out: it loads `node:util`, and loading that opens a pipe on a piped stdin in Node itself.
    const urls = Object.keys(entries)
      .filter((name) => name !== "testing/index")
      .map((name) => pathToFileURL(join(DIST, `${name}.js`)).href)
    const { stdout, stderr } = await run(process.execPath, ["--input-type=module", "-e", probe(urls)])
    expect(stdout).toBe("")
    expect(JSON.parse(stderr)).toEqual({ globals: [], resources: [] })
  })
})
