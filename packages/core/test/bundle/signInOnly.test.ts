import { fileURLToPath } from "node:url"
import { build } from "esbuild"
import { describe, expect, it } from "vitest"
import { bundleOptions } from "../../../../examples/lambda/scripts/build"
import { exampleBundleSources, keptInputs } from "./exampleBundle"

const at = (path: string) => fileURLToPath(new URL(path, import.meta.url))

/**
 * Bundles `contents` as a Lambda function would be, from the packages' sources; answers the inputs that put
 * bytes into the bundle (the metafile's inputs also list files read and then shaken out).
 */
const bundledInputs = async (contents: string): Promise<ReadonlyArray<string>> => {
  const result = await build({
    stdin: { contents, resolveDir: at("."), loader: "ts" },
    bundle: true,
    platform: "node",
    format: "esm",
    minify: true,
    write: false,
    metafile: true,
    logLevel: "silent",
    alias: {
      "@walletgate/core": at("../../src/index.ts"),
      "@walletgate/core/adapter": at("../../src/http/adapter.ts"),
      "@walletgate/lambda": at("../../../adapter-lambda/src/index.ts")
    }
  })
  return keptInputs(result.metafile)
}

const CHAIN_CODE =
  /node_modules\/(viem|ox|abitype|@noble\/curves|@scure)\/|packages\/core\/src\/(chain|kernel|payout|sweeper)\//

describe("a Lambda function of phone sign-in alone", () => {
  it("bundles no chain code: no viem, no chain, wallet, payout or lookup module", async () => {
    const inputs = await bundledInputs(`
      import { composeGateway, embeddedSignInPorts, phoneSignIn } from "@walletgate/core"
      import { createHandler } from "@walletgate/lambda"
      export const handler = createHandler(composeGateway({ modules: [phoneSignIn()], ports: embeddedSignInPorts() }))
    `)
    expect(inputs.some((input) => input.includes("packages/core/src/otp/PhoneSignIn.ts"))).toBe(true)
    expect(inputs.filter((input) => CHAIN_CODE.test(input))).toEqual([])
  })

  it("would hold chain code if the function served wallet transactions (the check can fail)", async () => {
    const inputs = await bundledInputs(`
      import { makeGateway } from "@walletgate/core"
      import { createHandler } from "@walletgate/lambda"
      export const handler = createHandler(makeGateway())
    `)
    expect(inputs.filter((input) => CHAIN_CODE.test(input)).length).toBeGreaterThan(0)
  })
})

/**
 * Bundles `contents` from the built packages (`npm run build`), resolved as an application resolves them: through
 * their package.json `exports` and `sideEffects`. Answers every input esbuild read (`read`) and those that put
 * bytes into the bundle (`kept`), and the bundle's size.
 */
const bundledFromDist = async (
  contents: string
): Promise<{ read: ReadonlyArray<string>; kept: ReadonlyArray<string>; bytes: number }> => {
  const result = await build({
    stdin: { contents, resolveDir: at("../../../../examples/lambda"), loader: "ts" },
    bundle: true,
    platform: "node",
    format: "esm",
    minify: true,
    write: false,
    metafile: true,
    logLevel: "silent"
  })
  const outputs = Object.values(result.metafile.outputs)
  return {
    read: Object.keys(result.metafile.inputs),
    kept: keptInputs(result.metafile),
    bytes: outputs.reduce((total, output) => total + output.bytes, 0)
  }
}

const VIEM = /node_modules\/(viem|ox|abitype|@noble\/curves|@scure)\//

describe("a Lambda function of phone sign-in alone, from the built packages", () => {
  it("imports no chain module at all through the subpaths (not even one a bundler would drop)", async () => {
    const { read, kept } = await bundledFromDist(`
      import { composeGateway } from "@walletgate/core/compose"
      import { embeddedSignInPorts, phoneSignIn } from "@walletgate/core/otp"
      import { createHandler } from "@walletgate/lambda"
      export const handler = createHandler(composeGateway({ modules: [phoneSignIn()], ports: embeddedSignInPorts() }))
    `)
    expect(kept.some((input) => input.includes("packages/core/dist/"))).toBe(true)
    expect(read.filter((input) => VIEM.test(input))).toEqual([])
  })

  it("bundles no viem from the main entry either: the dist keeps one file per module, and none has side effects", async () => {
    const { kept } = await bundledFromDist(`
      import { composeGateway, embeddedSignInPorts, phoneSignIn } from "@walletgate/core"
      import { createHandler } from "@walletgate/lambda"
      export const handler = createHandler(composeGateway({ modules: [phoneSignIn()], ports: embeddedSignInPorts() }))
    `)
    expect(kept.some((input) => input.includes("packages/core/dist/"))).toBe(true)
    expect(kept.filter((input) => VIEM.test(input))).toEqual([])
  })

  it("would hold viem for a gateway of every module (the check can fail)", async () => {
    const { kept } = await bundledFromDist(`
      import { makeGateway } from "@walletgate/core"
      import { createHandler } from "@walletgate/lambda"
      export const handler = createHandler(makeGateway())
    `)
    expect(kept.filter((input) => VIEM.test(input)).length).toBeGreaterThan(0)
  })
})

const CHAIN_MODULE = /packages\/core\/src\/(chain|kernel|payout|sweeper)\//

describe("the example's Lambda function of phone sign-in (examples/lambda/src/signIn.ts), state on Redis", () => {
  it("bundles no viem, ox, abitype or @noble/curves, and no chain, wallet, payout or sweeper module of the core", async () => {
    const sources = await exampleBundleSources("signIn")
    expect(sources.some((source) => source.endsWith("packages/core/src/otp/PhoneSignIn.ts"))).toBe(true)
    expect(sources.some((source) => source.includes("packages/store-redis/src/"))).toBe(true)
    expect(sources.filter((source) => VIEM.test(source) || CHAIN_MODULE.test(source))).toEqual([])
  })

  // Each setting is built when it is read (config/read.ts `setting`): one the function never reads is not in its
  // bundle, and its schema is not built at import.
  it("carries none of the settings it does not read (the wallet routes', the operator's)", async () => {
    const text = async (name: "signIn" | "handler") =>
      (await build({ ...bundleOptions(name), write: false, logLevel: "silent" })).outputFiles[0]?.text ?? ""
    const unread = ["WALLETGATE_RESOLVER", "WALLETGATE_CLIENT_STATUSES", "WALLETGATE_IDENTITY_PROVIDERS"]
    const signIn = await text("signIn")
    expect(unread.filter((name) => signIn.includes(name))).toEqual([])
    // The function of every route reads them: the check can fail.
    const everyRoute = await text("handler")
    expect(unread.filter((name) => everyRoute.includes(name))).toEqual(unread)
  })

  it("would hold them for the function of every route (the check can fail)", async () => {
    const sources = await exampleBundleSources("handler")
    expect(sources.filter((source) => VIEM.test(source)).length).toBeGreaterThan(0)
    expect(sources.filter((source) => CHAIN_MODULE.test(source)).length).toBeGreaterThan(0)
  })
})
