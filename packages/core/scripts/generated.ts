// One way the build keeps a committed generated source file current: written when it differs, or, with `--check`,
// refused (exit 1) when it is stale, so that a test or CI can tell a forgotten regeneration.
import { readFileSync, writeFileSync } from "node:fs"

/** Writes `source` to `outputFile` when it differs; with `--check` on the command line, exits 1 naming `script`. */
export const writeGenerated = (outputFile: string, source: string, script: string): void => {
  let current = ""
  try {
    current = readFileSync(outputFile, "utf8")
  } catch {
    current = ""
  }
  if (current === source) return
  if (process.argv.includes("--check")) {
    console.error(`${outputFile} is stale: run node ${script}`)
    process.exit(1)
  }
  writeFileSync(outputFile, source)
}
