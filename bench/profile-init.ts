// Where a Lambda function's init goes: `node bench/profile-init.ts [signIn|handler|<file.mjs>] [runs]` bundles the
// example's function as examples/lambda/scripts/build.ts does but not minified (so each line of the bundle belongs to
// one source module, which esbuild names in a `// path` comment above it), then `import()`s it in `runs` fresh node
// processes started with Lambda's flags and `--cpu-prof` (settings read, Redis connected: the init, as bench/lambda.ts
// times it), and prints the mean self time per source module and the top-level work (what the bundle's top-level
// code called, inclusive) from the .cpuprofile files. Not minified, the bundle parses a little slower than the one
// shipped: the split between modules holds, not the total.
import { spawnSync } from "node:child_process"
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { build } from "esbuild"
import { bundleOptions, type FunctionName } from "../examples/lambda/scripts/build.ts"
import { lambdaNodeFlags, memorySizeMb } from "../examples/lambda/test/runtimeApi.ts"
import { startRedisServer } from "../packages/store-redis/test/redis-server.ts"
import { functionEnvironment } from "./lambda.ts"
import { printTable } from "./table.ts"

/** One node of a .cpuprofile (V8's format). */
interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly children?: ReadonlyArray<number>
  readonly positionTicks?: ReadonlyArray<{ readonly line: number; readonly ticks: number }>
}

/** A .cpuprofile: its nodes, the node of each sample and the µs before each sample. */
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
  readonly startTime: number
  readonly endTime: number
}

/** The source module of each line of a non-minified esbuild bundle (1-based lines), from its `// path` comments. */
const modulesByLine = (text: string): ReadonlyArray<string> => {
  const lines = text.split("\n")
  const owner: Array<string> = ["(bundle)"]
  let current = "(bundle glue)"
  for (const line of lines) {
    const named = /^\/\/ (\S+\.(?:m?js|ts|cjs|json))$/.exec(line)
    if (named?.[1] !== undefined) current = named[1].replace(/^(\.\.\/)+/, "")
    owner.push(current)
  }
  return owner
}

/** A short name for a module's path: the package and its file. */
const shortName = (path: string): string =>
  path
    .replace(/^.*node_modules\//, "")
    .replace(/^packages\/([^/]+)\/(dist|src)\//, "walletgate/$1/")
    .replace(/^effect\/dist\//, "effect/")

const bundleFor = async (target: string, dir: string): Promise<string> => {
  if (target.endsWith(".mjs") || target.endsWith(".js")) return target
  const options = bundleOptions(target as FunctionName)
  const outfile = join(dir, `${target}.mjs`)
  await build({ ...options, outfile, minify: false, metafile: false })
  return outfile
}

/** How many calls deep the work below the top level is shown. */
const TREE_DEPTH = 4

const main = async () => {
  const target = process.argv[2] ?? "signIn"
  const runs = Number(process.argv[3] ?? 5)
  const dir = await mkdtemp(join(tmpdir(), "walletgate-profile-"))
  const file = await bundleFor(target, dir)
  const url = pathToFileURL(file).href
  const owner = modulesByLine(await readFile(file, "utf8"))
  const redis = await startRedisServer()
  const env = { PATH: process.env.PATH ?? "", ...functionEnvironment(redis.url) }
  const profiles = join(dir, "profiles")
  const importTimes: Array<number> = []
  try {
    for (let run = 0; run < runs; run++) {
      const timed =
        "const t = performance.now(); await import(process.argv[1]); console.log(performance.now() - t); process.exit(0)"
      const args = [
        ...lambdaNodeFlags(memorySizeMb),
        "--cpu-prof",
        `--cpu-prof-dir=${profiles}`,
        "--cpu-prof-interval=100",
        "--input-type=module",
        "-e",
        timed,
        url
      ]
      const child = spawnSync(process.execPath, args, { encoding: "utf8", env })
      if (child.status !== 0) throw new Error(`import() of ${file} failed:\n${child.stderr}`)
      importTimes.push(Number(child.stdout.trim().split("\n").at(-1)))
    }
  } finally {
    await redis.stop()
  }

  const selfByModule = new Map<string, number>()
  const selfByFunction = new Map<string, number>()
  const topLevel = new Map<string, number>()
  const topLevelSelf = new Map<string, number>()
  /** Inclusive time by call path below the top level, TREE_DEPTH calls deep (`a > b > c`), Effect's frames left out. */
  const belowTop = new Map<string, number>()
  const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us)
  const files = (await readdir(profiles)).filter((name) => name.endsWith(".cpuprofile"))
  for (const name of files) {
    const profile = JSON.parse(await readFile(join(profiles, name), "utf8")) as Profile
    const byId = new Map(profile.nodes.map((node) => [node.id, node]))
    const parent = new Map<number, number>()
    for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
    const self = new Map<number, number>()
    profile.samples.forEach((id, index) => {
      self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0))
    })
    const where = (node: ProfileNode, line: number) =>
      node.callFrame.url === url
        ? shortName(owner[line] ?? "(bundle)")
        : node.callFrame.url === ""
          ? node.callFrame.functionName
          : node.callFrame.url.startsWith("node:")
            ? "node internals"
            : shortName(node.callFrame.url)
    // The bundle's top-level code: the anonymous function of the bundle's url at line 0.
    const isTop = (node: ProfileNode | undefined) =>
      node !== undefined && node.callFrame.url === url && node.callFrame.lineNumber === 0
    for (const node of profile.nodes) {
      const us = self.get(node.id) ?? 0
      if (us === 0) continue
      const ticks = node.positionTicks ?? []
      const total = ticks.reduce((sum, tick) => sum + tick.ticks, 0)
      if (node.callFrame.url === url && total > 0) {
        for (const tick of ticks) {
          add(selfByModule, where(node, tick.line), (us * tick.ticks) / total)
          if (isTop(node)) add(topLevelSelf, where(node, tick.line), (us * tick.ticks) / total)
        }
      } else {
        add(selfByModule, where(node, node.callFrame.lineNumber + 1), us)
      }
      const fn = `${where(node, node.callFrame.lineNumber + 1)} ${node.callFrame.functionName || "(anonymous)"}`
      add(selfByFunction, isTop(node) ? `${fn} (top level)` : fn, us)
      // Attribute the sample to the child of the top-level code it ran under (inclusive), if any, and to the path of
      // calls below that child.
      const nameOf = (each: ProfileNode) =>
        `${where(each, each.callFrame.lineNumber + 1)} ${each.callFrame.functionName || "(anonymous)"}`
      const path: Array<string> = []
      let current: ProfileNode | undefined = node
      while (current !== undefined) {
        // Effect's own frames (its fiber loop) are left out of the path: they would fill it.
        if (!nameOf(current).startsWith("effect/")) path.unshift(nameOf(current))
        const up = parent.get(current.id)
        const above = up === undefined ? undefined : byId.get(up)
        if (isTop(above)) {
          add(topLevel, nameOf(current), us)
          for (let depth = 2; depth <= Math.min(TREE_DEPTH, path.length); depth++) {
            add(belowTop, path.slice(0, depth).join(" > "), us)
          }
          break
        }
        current = above
      }
    }
  }
  const n = files.length
  const sorted = (map: Map<string, number>, count: number) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([key, us]) => [key, `${(us / n / 1000).toFixed(1)} ms`])
  const median = [...importTimes].sort((a, b) => a - b)[Math.floor(importTimes.length / 2)] ?? 0
  console.log(
    `${target}: ${n} profiles, import() median ${median.toFixed(1)} ms (${importTimes.map((t) => t.toFixed(0)).join(", ")})`
  )
  console.log("\nself time per module (mean per process; the whole process, node's own start included)\n")
  printTable(["module", "self"], sorted(selfByModule, 25))
  console.log("\nself time per function\n")
  printTable(["function", "self"], sorted(selfByFunction, 25))
  console.log("\nthe bundle's top-level code itself (self, per module its lines belong to)\n")
  printTable(["module", "self"], sorted(topLevelSelf, 20))
  console.log("\nwork called from the bundle's top level (inclusive)\n")
  printTable(["callee", "inclusive"], sorted(topLevel, 25))
  console.log(`\nbelow those callees, ${TREE_DEPTH} calls deep, Effect's frames left out (inclusive, from 1 ms)\n`)
  printTable(
    ["calls", "inclusive"],
    sorted(belowTop, belowTop.size).filter(([path]) => (belowTop.get(path ?? "") ?? 0) / n >= 1_000)
  )
  await rm(dir, { recursive: true, force: true })
}

await main()
