import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const SRC = fileURLToPath(new URL("../src", import.meta.url))
const TEST = fileURLToPath(new URL(".", import.meta.url))

/** The test folders that check what no single room of `src/` holds (listed, with why, in `test/README.md`). */
const CROSS_CUTTING_TESTS = ["bundle", "ports", "robustness"]

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

/** The deploy tooling: it lives in `deploy/`, never under `chain/`. */
const DEPLOY_TOOLS = ["deployment.ts", "contractPackages.ts", "contracts.ts", "codeChecks.ts"]

/** The most lines of a hand-written source file (`*.generated.ts` files are exempt). */
const MAX_LINES = 400

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

/** The imports from a file of room `from` to a file of room `to`. */
const edgesBetween = (graph: Map<string, Array<string>>, from: string, to: string): Array<string> =>
  [...graph].flatMap(([file, targets]) =>
    roomOf(file) === from
      ? targets
          .filter((target) => roomOf(target) === to)
          .map((target) => `${relative(SRC, file)} → ${relative(SRC, target)}`)
      : []
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

  it("keeps the transaction pipeline above the network and the state, below the domains", () => {
    const floor = (room: string) => FLOORS[room] ?? Number.NaN
    expect(floor("operations")).toBeGreaterThan(Math.max(floor("chain"), floor("state"), floor("http")))
    for (const domain of ["kernel", "payout", "auth"]) expect(floor("operations")).toBeLessThan(floor(domain))
    expect(edgesBetween(graph, "chain", "operations")).toEqual([])
  })

  it("keeps http/ out of every room's errors: a domain's errors are its own", () => {
    const errorFiles = [...graph.keys()].filter((file) => file.endsWith("/errors.ts") && roomOf(file) !== "http")
    expect(errorFiles.length).toBeGreaterThan(5)
    expect(
      errorFiles.flatMap((file) =>
        (graph.get(file) ?? []).filter((target) => roomOf(target) === "http").map((target) => relative(SRC, target))
      )
    ).toEqual([])
  })

  it("keeps the transport's errors out of the payout domain: it raises its own", () => {
    const transportErrors = join(SRC, "http/errors.ts")
    const payoutFiles = [...graph.keys()].filter((file) => roomOf(file) === "payout")
    expect(payoutFiles.length).toBeGreaterThan(5)
    expect(
      payoutFiles.filter((file) => graph.get(file)?.includes(transportErrors)).map((file) => relative(SRC, file))
    ).toEqual([])
  })

  it("keeps deploy tooling in deploy/, used by devnet/ and cli/ alone", () => {
    const files = [...graph.keys()].map((file) => relative(SRC, file))
    for (const tool of DEPLOY_TOOLS) {
      expect(files).toContain(`deploy/${tool}`)
      expect(files).not.toContain(`chain/${tool}`)
    }
    const users = new Set(
      [...graph].flatMap(([file, targets]) =>
        targets.some((target) => roomOf(target) === "deploy") && roomOf(file) !== "deploy" ? [roomOf(file)] : []
      )
    )
    expect([...users].sort()).toEqual(["cli", "devnet"])
  })

  it("has no hand-written source file over 400 lines", () => {
    const long = [...graph.keys()]
      .filter((file) => !file.endsWith(".generated.ts"))
      .map((file) => [relative(SRC, file), readFileSync(file, "utf8").split("\n").length - 1] as const)
      .filter(([, lines]) => lines > MAX_LINES)
    expect(long.map(([file, lines]) => `${file}: ${lines}`)).toEqual([])
  })

  it("takes one request path: no schema JIT, no fiber polled, no service handed to a handler beside its effect", () => {
    const shortcuts = [/SchemaJITCompiler/, /\.pollUnsafe\(/, /currentMoment/, /(context|_), services\b/]
    const found = [...graph.keys()].flatMap((file) => {
      const text = readFileSync(file, "utf8")
      return shortcuts
        .filter((shortcut) => shortcut.test(text))
        .map((shortcut) => `${relative(SRC, file)}: ${shortcut}`)
    })
    expect(found).toEqual([])
  })

  it("knows every room", () => {
    const rooms = new Set([...graph.keys()].map(roomOf))
    expect([...rooms].filter((room) => FLOORS[room] === undefined)).toEqual([])
  })
})

describe("the core's test folders", () => {
  const folders = (dir: string) =>
    readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
  /** The folders that name neither a room of `src/` nor a listed cross-cutting suite. */
  const strays = (tests: ReadonlyArray<string>, rooms: ReadonlyArray<string>) =>
    tests.filter((folder) => !rooms.includes(folder) && !CROSS_CUTTING_TESTS.includes(folder))

  it("mirror src/: each names a room, or a cross-cutting suite test/README.md lists", () => {
    expect(strays(folders(TEST), folders(SRC))).toEqual([])
    const readme = readFileSync(join(TEST, "README.md"), "utf8")
    expect(CROSS_CUTTING_TESTS.filter((folder) => !readme.includes(`- \`${folder}/\``))).toEqual([])
  })

  it("finds a folder that names no room", () => {
    expect(strays(["chain", "ratelimit", "bundle"], ["chain", "state"])).toEqual(["ratelimit"])
  })
})
