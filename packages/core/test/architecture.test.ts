import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const SRC = fileURLToPath(new URL("../src", import.meta.url))

/**
 * The rooms of the core and their floors: a file may import from its own room or a lower floor, never
 * from a higher one or a sibling room on its floor unless that room is listed in `siblings`.
 */
const FLOORS: Record<string, number> = {
  internal: 0,
  random: 0,
  state: 1,
  chain: 2,
  http: 2,
  operations: 3,
  auth: 4,
  deploy: 4,
  otp: 5,
  sweeper: 5,
  kernel: 5,
  payout: 5,
  operator: 6,
  config: 6,
  devnet: 6,
  "(root)": 7,
  telemetry: 7,
  cli: 8,
  testing: 8
}

const roomOf = (file: string): string => {
  const [first, ...rest] = relative(SRC, file).split("/")
  return rest.length === 0 ? "(root)" : (first ?? "(root)")
}

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith(".ts") ? [path] : []
  })

const importsOf = (file: string): Array<string> =>
  ts
    .preProcessFile(readFileSync(file, "utf8"), true, true)
    .importedFiles.map((imported) => imported.fileName)
    .filter((name) => name.startsWith("."))
    .map((name) => {
      const target = resolve(dirname(file), name)
      return target.endsWith(".ts") ? target : `${target}.ts`
    })

const importGraph = (root: string): Map<string, Array<string>> =>
  new Map(sourceFiles(root).map((file) => [file, importsOf(file)]))

/** Each import that goes up a floor or sideways into another room of the same floor. */
const upwardImports = (graph: Map<string, Array<string>>): Array<string> =>
  [...graph].flatMap(([file, targets]) =>
    targets.flatMap((target) => {
      const from = roomOf(file)
      const to = roomOf(target)
      if (from === to) return []
      const fromFloor = FLOORS[from]
      const toFloor = FLOORS[to]
      if (fromFloor === undefined || toFloor === undefined)
        return [`${relative(SRC, file)} → ${relative(SRC, target)}: unknown room`]
      return toFloor < fromFloor ? [] : [`${relative(SRC, file)} → ${relative(SRC, target)}`]
    })
  )

/** Every cycle among files, each as the list of files on it. */
const cycles = (graph: Map<string, Array<string>>): Array<Array<string>> => {
  const found: Array<Array<string>> = []
  const state = new Map<string, "open" | "done">()
  const stack: Array<string> = []
  const visit = (file: string) => {
    state.set(file, "open")
    stack.push(file)
    for (const target of graph.get(file) ?? []) {
      if (state.get(target) === "open") found.push(stack.slice(stack.indexOf(target)).map((f) => relative(SRC, f)))
      else if (state.get(target) === undefined && graph.has(target)) visit(target)
    }
    stack.pop()
    state.set(file, "done")
  }
  for (const file of graph.keys()) if (state.get(file) === undefined) visit(file)
  return found
}

describe("the core's import graph", () => {
  const graph = importGraph(SRC)

  it("has no import up a floor or across rooms of one floor", () => {
    expect(upwardImports(graph)).toEqual([])
  })

  it("has no cycle", () => {
    expect(cycles(graph)).toEqual([])
  })

  it("finds an import up a floor, across rooms of one floor, and a cycle, when there is one", () => {
    const at = (path: string) => join(SRC, path)
    const tangled = new Map([
      [at("http/router.ts"), [at("otp/errors.ts")]],
      [at("kernel/Kernel.ts"), [at("payout/Payouts.ts"), at("chain/networks.ts")]],
      [at("otp/errors.ts"), [at("internal/problem.ts")]],
      [at("state/a.ts"), [at("state/b.ts")]],
      [at("state/b.ts"), [at("state/a.ts")]]
    ])
    expect(upwardImports(tangled)).toEqual(["http/router.ts → otp/errors.ts", "kernel/Kernel.ts → payout/Payouts.ts"])
    expect(cycles(tangled)).toEqual([["state/a.ts", "state/b.ts"]])
  })

  it("knows every room", () => {
    const rooms = new Set([...graph.keys()].map(roomOf))
    expect([...rooms].filter((room) => FLOORS[room] === undefined)).toEqual([])
  })
})
