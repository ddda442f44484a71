import { defineConfig } from "tsup"

export default defineConfig({
  entry: { index: "src/index.ts", "testing/index": "src/testing/index.ts", cli: "src/cli/main.ts" },
  format: ["esm", "cjs"],
  dts: true,
  clean: true,
  sourcemap: true,
  target: "node22"
})
