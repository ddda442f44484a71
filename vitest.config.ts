import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const src = (path: string) => fileURLToPath(new URL(path, import.meta.url))

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@walletgate\/core\/otp$/, replacement: src("./packages/core/src/otp/index.ts") },
      { find: /^@walletgate\/core\/auth$/, replacement: src("./packages/core/src/auth/index.ts") },
      { find: /^@walletgate\/core\/state$/, replacement: src("./packages/core/src/state/index.ts") },
      { find: /^@walletgate\/core\/chain$/, replacement: src("./packages/core/src/chain/index.ts") },
      { find: /^@walletgate\/core\/operations$/, replacement: src("./packages/core/src/operations/index.ts") },
      { find: /^@walletgate\/core\/kernel$/, replacement: src("./packages/core/src/kernel/index.ts") },
      { find: /^@walletgate\/core\/payout$/, replacement: src("./packages/core/src/payout/index.ts") },
      { find: /^@walletgate\/core\/sweeper$/, replacement: src("./packages/core/src/sweeper/index.ts") },
      { find: /^@walletgate\/core\/operator$/, replacement: src("./packages/core/src/operator/index.ts") },
      { find: /^@walletgate\/core\/config$/, replacement: src("./packages/core/src/config/index.ts") },
      { find: /^@walletgate\/core\/telemetry$/, replacement: src("./packages/core/src/telemetry/index.ts") },
      { find: /^@walletgate\/core\/adapter$/, replacement: src("./packages/core/src/http/adapter.ts") },
      { find: /^@walletgate\/core\/devnet$/, replacement: src("./packages/core/src/devnet/index.ts") },
      { find: /^@walletgate\/core\/testing$/, replacement: src("./packages/core/src/testing/index.ts") },
      { find: /^@walletgate\/core\/compose$/, replacement: src("./packages/core/src/compose.ts") },
      { find: /^@walletgate\/core$/, replacement: src("./packages/core/src/index.ts") },
      { find: /^@walletgate\/express$/, replacement: src("./packages/adapter-express/src/index.ts") },
      { find: /^@walletgate\/koa$/, replacement: src("./packages/adapter-koa/src/index.ts") },
      { find: /^@walletgate\/lambda$/, replacement: src("./packages/adapter-lambda/src/index.ts") },
      { find: /^@walletgate\/redis$/, replacement: src("./packages/store-redis/src/index.ts") }
    ]
  },
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/*/test/**/*.test.ts", "examples/test/**/*.test.ts"],
    // Files of a worker share its module graph instead of each loading it anew: the suite took 377 s isolated and
    // 285 s so on a quiet 2-core machine (import had been a fifth of it). A file must therefore leave no state
    // behind: it stops what it starts and restores what it changes, as every file here does.
    isolate: false,
    // One devnet per worker, started when a file first asks for it (packages/core/test/devnet/shared.ts).
    globalSetup: ["./packages/core/test/devnet/broker.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    tags: [
      {
        name: "devnet",
        description:
          "against a real anvil and alto bundler (startDevnet): ≈ 30 s; `--tags-filter=devnet` runs them alone",
        timeout: 60_000
      }
    ]
  }
})
