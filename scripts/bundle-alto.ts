// Bundles the installed alto bundler's CLI into one file, `node_modules/.cache/walletgate/alto-<version>.mjs`,
// which the devnet's `startAlto` runs when it exists: the same code, loaded in about half the CPU time of the ~600
// modules it otherwise resolves one by one (it imports Sentry and OpenTelemetry at start). pino stays outside the
// bundle (it starts its transports from files of its own). Nothing to do when the file for this version exists;
// one line when it bundles; a failure only warns, and alto then runs from its package as before.
// `npm run build` runs it, and `npm start` (scripts/start.ts) calls `bundleAlto`.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

const require = createRequire(import.meta.url)
const packageDir = join(dirname(require.resolve("@pimlico/alto")), "..")
const { version } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { readonly version: string }
// The same place `altoBundlePath` (packages/core/src/devnet/alto.ts) looks.
const cacheDir = join(packageDir, "..", "..", ".cache", "walletgate")
const target = join(cacheDir, `alto-${version}.mjs`)

/** Bundles alto into the cache unless this version's bundle is there; never throws (a failure only warns). */
export const bundleAlto = async (): Promise<void> => {
  if (existsSync(target)) return
  process.stdout.write(`bundling alto ${version} for faster starts… `)
  const started = performance.now()
  mkdirSync(cacheDir, { recursive: true })
  for (const old of readdirSync(cacheDir)) if (/^alto-.*\.mjs/.test(old)) rmSync(join(cacheDir, old), { force: true })
  const partial = `${target}.${process.pid}.tmp`
  try {
    // esbuild is loaded only when there is something to bundle.
    const { build } = await import("esbuild")
    await build({
      entryPoints: [join(packageDir, "esm", "cli", "alto.js")],
      outfile: partial,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node22",
      logLevel: "silent",
      external: ["pino", "pino-pretty", "pino-http", "thread-stream"],
      // CommonJS dependencies inside an ES module need these three.
      banner: {
        js: [
          'import { createRequire as __bundleRequire } from "node:module"',
          'import { fileURLToPath as __bundlePath } from "node:url"',
          "const require = __bundleRequire(import.meta.url)",
          "const __filename = __bundlePath(import.meta.url)",
          'const __dirname = __bundlePath(new URL(".", import.meta.url))'
        ].join("\n")
      }
    })
    // Appears whole or not at all: a start never runs a half-written file.
    renameSync(partial, target)
    process.stdout.write(`${((performance.now() - started) / 1000).toFixed(1)} s\n`)
  } catch (error) {
    rmSync(partial, { force: true })
    process.stdout.write(`skipped (${error instanceof Error ? error.message.split("\n")[0] : String(error)})\n`)
  }
}

if (import.meta.main) await bundleAlto()
