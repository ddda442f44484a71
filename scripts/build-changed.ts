// Builds the workspaces that changed since their last build, and what they depend on, in dependency order:
// `node scripts/build-changed.ts [workspace name…]` (default: every workspace with a build script). A workspace is
// up to date when its output (dist/, or build/ for a bundle) is newer than each of its own files, the lock file and
// the output of every workspace it depends on. One line per workspace it builds; the build's own output only when
// it fails. `npm start` (scripts/start.ts) calls `buildChanged`, so that a second start with nothing changed builds
// nothing.
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

interface Workspace {
  readonly name: string
  readonly dir: string
  readonly build: string | undefined
  /** The walletgate workspaces it imports. */
  readonly needs: ReadonlyArray<string>
  /** Where its build writes: tsup's dist/, else a bundle's build/. */
  readonly output: string
}

const workspaces = new Map<string, Workspace>()
for (const group of ["packages", "examples"]) {
  for (const entry of readdirSync(join(root, group))) {
    const dir = join(root, group, entry)
    if (!existsSync(join(dir, "package.json"))) continue
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
      readonly name: string
      readonly scripts?: Readonly<Record<string, string>>
      readonly dependencies?: Readonly<Record<string, string>>
      readonly peerDependencies?: Readonly<Record<string, string>>
    }
    const build = manifest.scripts?.build
    workspaces.set(manifest.name, {
      name: manifest.name,
      dir,
      build,
      needs: Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies }).filter((name) =>
        name.startsWith("@walletgate/")
      ),
      output: join(dir, build?.includes("tsup") === true ? "dist" : "build")
    })
  }
}

/** The files under `dir` (not node_modules, outputs or tests), each with its modification time. */
const filesOf = function* (dir: string): Generator<number> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (["node_modules", "dist", "build", "test", "coverage"].includes(entry.name)) continue
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield* filesOf(path)
    else if (entry.isFile()) yield statSync(path).mtimeMs
  }
}

/** The oldest and newest modification times of the files under `dir`; undefined when it holds none. */
const outputTimes = (dir: string): { readonly oldest: number; readonly newest: number } | undefined => {
  if (!existsSync(dir)) return undefined
  const times: Array<number> = []
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.isFile()) times.push(statSync(path).mtimeMs)
    }
  }
  walk(dir)
  return times.length === 0 ? undefined : { oldest: Math.min(...times), newest: Math.max(...times) }
}

const lockTime = existsSync(join(root, "package-lock.json")) ? statSync(join(root, "package-lock.json")).mtimeMs : 0

/** Why `workspace` must be built, or undefined when its output is up to date. */
const staleness = (workspace: Workspace): string | undefined => {
  const output = outputTimes(workspace.output)
  if (output === undefined) return "not built yet"
  if (Math.max(lockTime, ...filesOf(workspace.dir)) > output.oldest) return "its sources changed"
  for (const need of workspace.needs) {
    const needed = workspaces.get(need)
    const theirs = needed === undefined ? undefined : outputTimes(needed.output)
    if (theirs !== undefined && theirs.newest > output.oldest) return `${need} was rebuilt`
  }
  return undefined
}

/** The requested workspaces and everything they need, needs first. */
const ordered = (names: ReadonlyArray<string>): Array<Workspace> => {
  const out: Array<Workspace> = []
  const visit = (name: string, path: ReadonlyArray<string>) => {
    const workspace = workspaces.get(name)
    if (workspace === undefined) throw new Error(`no workspace ${name}`)
    if (path.includes(name)) throw new Error(`a dependency cycle: ${[...path, name].join(" → ")}`)
    if (out.includes(workspace)) return
    for (const need of workspace.needs) visit(need, [...path, name])
    out.push(workspace)
  }
  for (const name of names) visit(name, [])
  return out
}

/** Builds `names` (every workspace when empty) and what they need, where stale; exits the process if a build fails. */
export const buildChanged = (names: ReadonlyArray<string>): void => {
  const plan = ordered(names.length > 0 ? names : [...workspaces.keys()]).filter(
    (workspace) => workspace.build !== undefined
  )
  let built = 0
  for (const workspace of plan) {
    const why = staleness(workspace)
    if (why === undefined) continue
    process.stdout.write(`building ${workspace.name} (${why})… `)
    const started = performance.now()
    const result = spawnSync("npm", ["run", "build", "--silent", "-w", workspace.name], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"]
    })
    if (result.status !== 0) {
      process.stderr.write(`failed\n${result.stdout}${result.stderr}`)
      process.exit(result.status ?? 1)
    }
    built += 1
    process.stdout.write(`${((performance.now() - started) / 1000).toFixed(1)} s\n`)
  }
  if (built === 0) process.stdout.write("packages up to date\n")
}

if (import.meta.main) buildChanged(process.argv.slice(2))
