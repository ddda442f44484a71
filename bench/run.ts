// Runs the benchmarks (`npm run bench`). Every other `bench/*.ts` module exports
// `async function run(): Promise<void>`, which measures, prints a table and writes JSON to
// `bench/results/<name>.json`. They run one at a time, in name order, so that they never compete for
// the CPU. `node bench/run.ts stores` runs only the modules named. The modules import the built
// packages (`npm run bench` builds them first).
import { readdirSync } from "node:fs"
import { basename } from "node:path"
import { fileURLToPath } from "node:url"

const here = fileURLToPath(new URL(".", import.meta.url))
const wanted = process.argv.slice(2)
const modules = readdirSync(here)
  .filter((file) => file.endsWith(".ts") && file !== "run.ts")
  .map((file) => basename(file, ".ts"))
  .filter((name) => wanted.length === 0 || wanted.includes(name))
  .sort()

if (modules.length === 0) throw new Error(`no benchmark named ${wanted.join(", ")}`)
for (const name of modules) {
  const benchmark = (await import(new URL(`./${name}.ts`, import.meta.url).href)) as { run?: () => Promise<void> }
  if (typeof benchmark.run !== "function") throw new Error(`bench/${name}.ts does not export run()`)
  console.log(`\n## ${name}\n`)
  await benchmark.run()
}
