import { readFileSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { build, type Metafile } from "esbuild"
import { bundleOptions, type FunctionName } from "../../../../examples/lambda/scripts/build"

/** The inputs that put bytes into the bundle (the metafile's inputs also list files read and then shaken out). */
export const keptInputs = (metafile: Metafile): ReadonlyArray<string> =>
  Object.values(metafile.outputs).flatMap((output) =>
    Object.entries(output.inputs).flatMap(([input, { bytesInOutput }]) => (bytesInOutput > 0 ? [input] : []))
  )

/**
 * The source modules behind the inputs that put bytes into the example's bundle `name`, built exactly as
 * examples/lambda/scripts/build.ts builds it (from the packages' dist, Redis included). A file of a package's dist is
 * named by its source map (the core and the Redis store are built one output file per source module, so each maps to
 * one source: `packages/core/src/otp/PhoneSignIn.ts`); any other input by its own path.
 */
export const exampleBundleSources = async (name: FunctionName): Promise<ReadonlyArray<string>> => {
  const options = bundleOptions(name)
  const result = await build({ ...options, write: false, logLevel: "silent" })
  const root = typeof options.absWorkingDir === "string" ? options.absWorkingDir : process.cwd()
  return keptInputs(result.metafile).flatMap((input) => {
    if (!/packages\/[^/]+\/dist\/.+\.js$/.test(input)) return [input]
    const file = resolve(root, input)
    const map = JSON.parse(readFileSync(`${file}.map`, "utf8")) as { sources: ReadonlyArray<string> }
    return map.sources.map((source) => resolve(dirname(file), source))
  })
}
