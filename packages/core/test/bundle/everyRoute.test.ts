import { build } from "esbuild"
import { describe, expect, it } from "vitest"
import { exampleBundleSources, keptInputs } from "./exampleBundle"

/**
 * The viem actions the function of every route may hold: the reads of the network client
 * (`packages/core/src/chain/networkClient.ts`) and the actions they run themselves: `call` (under `readContract` and
 * `multicall`), `getGasPrice` (`estimateMaxPriorityFeePerGas`'s fallback), `iterateLogs` and `isRangeError` (`getLogs`).
 */
const ALLOWED_ACTIONS: ReadonlyArray<string> = [
  "call",
  "estimateMaxPriorityFeePerGas",
  "getBalance",
  "getBlock",
  "getBlockNumber",
  "getCode",
  "getGasPrice",
  "getLogs",
  "getTransactionReceipt",
  "internal/isRangeError",
  "iterateLogs",
  "multicall",
  "readContract",
  "simulateBlocks"
].map((action) => `node_modules/viem/_esm/actions/public/${action}.js`)

/**
 * Modules no route of the gateway runs: each would be bytes to load and compile at every cold start, and some do work
 * at import (`simulateCalls` parses and hashes six ABI items).
 */
const UNUSED_MODULES: ReadonlyArray<string> = [
  // ENS names and avatars (the gateway resolves no name)
  "node_modules/viem/_esm/actions/ens/",
  "node_modules/viem/_esm/utils/ens/avatar/",
  "node_modules/viem/_esm/utils/ens/namehash.js",
  // signature verification, watchers, filters, simulations the gateway does not make
  "node_modules/viem/_esm/actions/public/verifyHash.js",
  "node_modules/viem/_esm/actions/public/verifyMessage.js",
  "node_modules/viem/_esm/actions/public/verifyTypedData.js",
  "node_modules/viem/_esm/actions/public/watch",
  "node_modules/viem/_esm/actions/public/create",
  "node_modules/viem/_esm/actions/public/simulateCalls.js",
  "node_modules/viem/_esm/actions/public/simulateContract.js",
  "node_modules/viem/_esm/actions/public/fillTransaction.js",
  "node_modules/viem/_esm/actions/siwe/",
  "node_modules/viem/_esm/utils/siwe/",
  // wallet and token actions, the decorators that bring every action, the chain registry
  "node_modules/viem/_esm/actions/wallet/",
  "node_modules/viem/_esm/actions/token/",
  "node_modules/viem/_esm/clients/decorators/",
  "node_modules/viem/_esm/chains/",
  // viem's bundler client: its actions and its error decoding (the gateway's Bundler sends JSON-RPC itself)
  "node_modules/viem/_esm/account-abstraction/actions/",
  "node_modules/viem/_esm/account-abstraction/clients/",
  "node_modules/viem/_esm/account-abstraction/errors/",
  // HD wallets (the devnet's mnemonic accounts)
  "node_modules/@scure/bip32/",
  "node_modules/@scure/bip39/"
]

/** The modules among `sources` that should not be there: a viem action not allowed, or an unused module. */
const unwanted = (sources: ReadonlyArray<string>): ReadonlyArray<string> =>
  sources.filter(
    (source) =>
      (source.includes("node_modules/viem/_esm/actions/") &&
        !ALLOWED_ACTIONS.some((action) => source.endsWith(action))) ||
      UNUSED_MODULES.some((unused) => source.includes(unused))
  )

describe("the example's Lambda function of every route (examples/lambda/src/handler.ts)", () => {
  // viem's `call` loads its EIP-3668 code (`utils/ccip.js`) with `import()`, which a bundle holds: it cannot be left
  // out while `readContract` is used, and never runs (the client has `ccipRead: false`; test/payout/payout.test.ts).
  it("holds only the viem actions its network client makes, and no ENS, wallet, bundler-client or chain-registry module", async () => {
    const sources = await exampleBundleSources("handler")
    expect(sources.some((source) => source.endsWith("packages/core/src/operations/UserOperations.ts"))).toBe(true)
    expect(unwanted(sources)).toEqual([])
  })

  it("would name the modules of viem's public client (the check can fail)", async () => {
    const result = await build({
      stdin: {
        contents: `import { createPublicClient, http } from "viem"; export const client = createPublicClient({ transport: http() })`,
        resolveDir: import.meta.dirname,
        loader: "ts"
      },
      bundle: true,
      platform: "node",
      format: "esm",
      write: false,
      metafile: true,
      logLevel: "silent"
    })
    const found = unwanted(keptInputs(result.metafile))
    expect(found).toEqual(expect.arrayContaining(["node_modules/viem/_esm/actions/ens/getEnsAddress.js"]))
    expect(found).toEqual(expect.arrayContaining(["node_modules/viem/_esm/actions/public/simulateCalls.js"]))
  })
})
