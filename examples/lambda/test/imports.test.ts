// What a cold start loads besides the function's own code: importing the packages the sign-in function imports, from
// their built dist as an application resolves them, loads no builtin it does not use. An ES module import of a Node
// builtin goes through Node's ES module face of it, which reads every export: `http`'s `WebSocket` is a getter that
// loads undici (≈ 40 ms), `fs`'s `promises` loads fs/promises and readline.
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"

const run = promisify(execFile)

/** The builtin modules Node loaded while importing `specifiers` in a fresh process, resolved from this example. */
const loadedBy = async (specifiers: ReadonlyArray<string>): Promise<ReadonlyArray<string>> => {
  const probe = `
    const before = new Set(process.moduleLoadList)
    for (const specifier of ${JSON.stringify(specifiers)}) await import(specifier)
    process.stderr.write(JSON.stringify(process.moduleLoadList.filter((name) => !before.has(name))))
  `
  const { stderr } = await run(process.execPath, ["--input-type=module", "-e", probe], {
    cwd: fileURLToPath(new URL("..", import.meta.url))
  })
  return (JSON.parse(stderr) as ReadonlyArray<string>).flatMap((name) =>
    name.startsWith("NativeModule ") ? [name.slice("NativeModule ".length)] : []
  )
}

const UNUSED = /^(http|_http_\w+|internal\/deps\/undici\/.*|internal\/fs\/promises|internal\/readline\/.*)$/

describe("importing the sign-in function's packages", () => {
  it("loads neither node:http nor undici, fs/promises or readline", async () => {
    const loaded = await loadedBy([
      "@walletgate/core/compose",
      "@walletgate/core/otp",
      "@walletgate/core/config",
      "@walletgate/lambda",
      "@walletgate/redis"
    ])
    expect(loaded).toContain("net")
    expect(loaded.filter((name) => UNUSED.test(name))).toEqual([])
  })

  it("would see them loaded (the check can fail)", async () => {
    const loaded = await loadedBy(["node:http", "node:fs"])
    expect(loaded.filter((name) => UNUSED.test(name))).toEqual(
      expect.arrayContaining(["http", "internal/deps/undici/undici", "internal/fs/promises"])
    )
  })
})
