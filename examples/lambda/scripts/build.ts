// Bundles src/handler.ts and everything it imports into one ES module, build/handler.mjs, ready to zip.
import { rm, stat } from "node:fs/promises"
import { builtinModules } from "node:module"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

/** The bundle that `buildHandler` writes. */
export const bundlePath = fileURLToPath(new URL("../build/handler.mjs", import.meta.url))

/** Bundles the handler into {@link bundlePath} (node builtins only stay imports); resolves to its size in bytes. */
export const buildHandler = async (): Promise<number> => {
  await rm(fileURLToPath(new URL("../build", import.meta.url)), { recursive: true, force: true })
  await build({
    entryPoints: [fileURLToPath(new URL("../src/handler.ts", import.meta.url))],
    // This folder's own tsconfig, which has no `paths`: the packages resolve as an app's would, to their dist.
    tsconfig: fileURLToPath(new URL("../tsconfig.json", import.meta.url)),
    outfile: bundlePath,
    bundle: true,
    platform: "node",
    target: "node22",
    format: "esm",
    minify: true,
    treeShaking: true,
    external: [...builtinModules, "node:*"],
    logLevel: "warning"
  })
  return (await stat(bundlePath)).size
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const size = await buildHandler()
  console.log(`${bundlePath}: ${(size / 1024).toFixed(1)} KiB`)
}
