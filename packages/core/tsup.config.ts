import { globSync } from "node:fs"
import { defineConfig } from "tsup"

/** The package's entries (`package.json` `exports`): their output name and source file. */
export const entries = {
  index: "src/index.ts",
  compose: "src/compose.ts",
  "otp/index": "src/otp/index.ts",
  "auth/index": "src/auth/index.ts",
  "kernel/index": "src/kernel/index.ts",
  "payout/index": "src/payout/index.ts",
  "sweeper/index": "src/sweeper/index.ts",
  "operator/index": "src/operator/index.ts",
  "state/index": "src/state/index.ts",
  "chain/index": "src/chain/index.ts",
  "operations/index": "src/operations/index.ts",
  "config/index": "src/config/index.ts",
  "telemetry/index": "src/telemetry/index.ts",
  "http/adapter": "src/http/adapter.ts",
  "devnet/index": "src/devnet/index.ts",
  "testing/index": "src/testing/index.ts"
}

// One output file per source file, ESM only: a bundler that imports one name reads only the modules it reaches
// (`sideEffects: false`), where one merged chunk would bring every route's code, viem included. Only the
// entries get type declarations.
const modules = Object.fromEntries(
  globSync("src/**/*.ts")
    .filter((file) => file !== "src/cli/main.ts")
    .map((file) => [file.slice("src/".length, -".ts".length), file] as const)
)

export default defineConfig({
  entry: { ...modules, cli: "src/cli/main.ts" },
  format: ["esm"],
  splitting: true,
  dts: { entry: entries },
  clean: true,
  sourcemap: true,
  target: "node22"
})
