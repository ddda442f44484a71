import { globSync } from "node:fs"
import { defineConfig } from "tsup"

// One output file per source file, ESM only (as the core's build): with `sideEffects: false`, a bundler that imports
// `RedisConnection` and `RedisSignInStores` reads only their modules, where one merged file would bring every store
// and, through the wallet stores' imports, chain code. Only the entry gets type declarations.
const modules = Object.fromEntries(
  globSync("src/**/*.ts").map((file) => [file.slice("src/".length, -".ts".length), file] as const)
)

export default defineConfig({
  entry: modules,
  format: ["esm"],
  splitting: true,
  dts: { entry: { index: "src/index.ts" } },
  clean: true,
  sourcemap: true,
  target: "node22"
})
