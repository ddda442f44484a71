// Bundles each function into one ES module with everything it imports, ready to zip: build/handler.mjs (every route,
// src/handler.ts) and build/signIn.mjs (phone sign-in alone, src/signIn.ts), with esbuild's metafile of each beside
// it (build/<name>.meta.json: which package brought which bytes).
import { rm, stat, writeFile } from "node:fs/promises"
import { builtinModules } from "node:module"
import { fileURLToPath } from "node:url"
import { type BuildOptions, build, type Metafile } from "esbuild"

/** The functions of the example, by bundle name. */
export const functions = { handler: "../src/handler.ts", signIn: "../src/signIn.ts" } as const

/** A function of the example. */
export type FunctionName = keyof typeof functions

/** The folder the bundles go to (SAM's CodeUri). */
export const buildDir = fileURLToPath(new URL("../build/", import.meta.url))

/** The bundle of `name`. */
export const bundlePath = (name: FunctionName = "handler"): string => `${buildDir}${name}.mjs`

/** One bundle: its size in bytes and esbuild's metafile. */
export interface Bundle {
  readonly bytes: number
  readonly metafile: Metafile
}

/**
 * esbuild's options for the bundle of `name` (node builtins only stay imports): what {@link buildHandlers} builds, and
 * what the test of the sign-in bundle's contents (packages/core/test/bundle/signInOnly.test.ts) bundles.
 */
export const bundleOptions = (name: FunctionName): BuildOptions & { metafile: true } => ({
  entryPoints: [fileURLToPath(new URL(functions[name], import.meta.url))],
  // This folder's own tsconfig, which has no `paths`: the packages resolve as an app's would, to their dist.
  tsconfig: fileURLToPath(new URL("../tsconfig.json", import.meta.url)),
  outfile: bundlePath(name),
  bundle: true,
  platform: "node",
  target: "node22",
  format: "esm",
  minify: true,
  treeShaking: true,
  metafile: true,
  external: [...builtinModules, "node:*"],
  logLevel: "warning",
  // The packages' dist imports its shared chunks bare (`import "./chunk-….js"`) besides importing names from them;
  // under their `sideEffects: false` (true: no module of them does work at import) esbuild drops those bare imports,
  // which is what is wanted, and warns once per chunk.
  logOverride: { "ignored-bare-import": "silent" }
})

/** Bundles every function into {@link buildDir}; resolves to each one's size and metafile. */
export const buildHandlers = async (): Promise<Record<FunctionName, Bundle>> => {
  await rm(buildDir, { recursive: true, force: true })
  const built: Partial<Record<FunctionName, Bundle>> = {}
  for (const name of Object.keys(functions) as Array<FunctionName>) {
    const result = await build(bundleOptions(name))
    await writeFile(`${buildDir}${name}.meta.json`, JSON.stringify(result.metafile))
    built[name] = { bytes: (await stat(bundlePath(name))).size, metafile: result.metafile }
  }
  return built as Record<FunctionName, Bundle>
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [name, bundle] of Object.entries(await buildHandlers())) {
    console.log(`${bundlePath(name as FunctionName)}: ${(bundle.bytes / 1024).toFixed(1)} KiB`)
  }
}
