import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync, realpathSync } from "node:fs"
import { join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

// Every shell command the READMEs and docs show must run as written on a fresh clone after `npm install`: each
// fenced `sh` block is read line by line, and each command is run when it is safe and quick (the CLI's help), or
// checked against what it names (an npm script of that workspace, a file, a tarball `npm pack` makes). A command
// of a kind this test does not know fails it, so that a new one is looked at.
const root = fileURLToPath(new URL("../../", import.meta.url))
const markdown = [
  "README.md",
  ...readdirSync(join(root, "examples"))
    .map((name) => `examples/${name}/README.md`)
    .filter((path) => existsSync(join(root, path))),
  ...readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md") && name !== "decisions.md")
    .map((name) => `docs/${name}`),
  "bench/README.md"
].filter((path) => existsSync(join(root, path)))

interface Command {
  readonly file: string
  readonly line: string
  /** The directory it runs in, after the block's earlier `cd`s. */
  readonly cwd: string
  readonly words: ReadonlyArray<string>
}

/** The commands of a file's fenced shell blocks: continuation lines joined, comments and env assignments dropped. */
const commandsOf = (file: string): Array<Command> => {
  const text = readFileSync(join(root, file), "utf8")
  const commands: Array<Command> = []
  for (const block of text.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)) {
    let cwd = root
    const lines: Array<string> = []
    // Continuation lines (a trailing backslash, or a quote still open) belong to the line before.
    for (const raw of (block[1] ?? "").replace(/\\\n\s*/g, " ").split("\n")) {
      if (raw.trim().startsWith("#")) continue
      const last = lines.at(-1)
      if (last !== undefined && (last.match(/'/g)?.length ?? 0) % 2 === 1)
        lines[lines.length - 1] = `${last} ${raw.trim()}`
      else lines.push(raw)
    }
    for (const raw of lines) {
      const line = raw.replace(/\s+#\s.*$/, "").trim()
      if (line === "" || line.startsWith("#")) continue
      for (const part of line.split("&&").map((piece) => piece.trim())) {
        // An assignment's quoted value (`KEY="$(openssl …)"`) is one word.
        const words = (part.match(/[A-Z_][A-Z0-9_]*=(?:"[^"]*"|'[^']*')|'[^']*'|"[^"]*"|\S+/g) ?? []).filter(
          (word, at, all) =>
            // Leading `NAME=value` assignments set the environment only.
            all.slice(0, at + 1).every((w) => /^[A-Z_][A-Z0-9_]*=/.test(w)) ? false : word !== ""
        )
        commands.push({ file, line: part, cwd, words })
        if (words[0] === "cd" && words[1] !== undefined) cwd = resolve(cwd, words[1])
      }
    }
  }
  return commands
}

const packageJson = (dir: string): { name: string; version: string; scripts?: Record<string, string> } =>
  JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))

/** Workspace name → its directory. */
const workspaces = new Map(
  ["packages", "examples"].flatMap((group) =>
    readdirSync(join(root, group))
      .map((name) => join(root, group, name))
      .filter((dir) => existsSync(join(dir, "package.json")))
      .map((dir) => [packageJson(dir).name, dir] as const)
  )
)

/** The tarballs `npm run pack:tarballs` writes: `@walletgate/core` 0.0.0 → `walletgate-core-0.0.0.tgz`. */
const tarballs = new Set(
  [...workspaces.entries()]
    .filter(([name]) => !name.includes("/example-"))
    .map(([name, dir]) => `${name.replace("@", "").replace("/", "-")}-${packageJson(dir).version}.tgz`)
)

const bin = join(root, "node_modules", ".bin")
const configurationPage = readFileSync(join(root, "docs", "configuration.md"), "utf8")

/** What is wrong with a command, or `undefined`. Runs the safe ones. */
const check = (command: Command): string | undefined => {
  const [tool, ...args] = command.words
  const within = (path: string) => existsSync(resolve(command.cwd, path))
  switch (tool) {
    case "cd":
      // `../your-app` is the reader's own project.
      return args[0] === "../your-app" || within(args[0] ?? "") ? undefined : `no directory ${args[0]}`
    case "curl":
      // Needs the server the text starts first; the playground's and the examples' tests make these requests.
      return undefined
    case "sam":
      // AWS's deploy tool, installed by whoever deploys; the template it reads must be there.
      return within("template.yaml") ? undefined : "no template.yaml beside the sam command"
    case "aws":
      // AWS's CLI, installed by whoever deploys: the Lambda README's secret, from the file its sample JSON is saved as.
      return args[0] === "secretsmanager" && args.includes("file://walletgate-secret.json")
        ? undefined
        : "an aws command other than the Lambda README's create-secret"
    case "export": {
      // A variable for the commands after it: one the configuration page documents.
      const name = /^([A-Z][A-Z0-9_]*)=/.exec(args[0] ?? "")?.[1]
      return name !== undefined && configurationPage.includes(`\`${name}\``)
        ? undefined
        : `export of a variable docs/configuration.md does not document: ${args[0]}`
    }
    case "redis-server":
      // Debian's redis-server (scripts/ensure-tools.sh installs it), for a local Redis.
      return undefined
    case "node":
      return "a bare `node` may be older than the Node 22 the repository runs on: use an npm script or `npx node`"
    case "npm": {
      const workspace = args.includes("-w") ? args[args.indexOf("-w") + 1] : undefined
      const dir = workspace === undefined ? root : workspaces.get(workspace)
      if (dir === undefined) return `no workspace ${workspace}`
      const [verb, name] = args
      if (verb === "install") {
        const wrong = args.filter((arg) => arg.endsWith(".tgz") && !tarballs.has(arg.split("/").at(-1) ?? ""))
        return wrong.length === 0 ? undefined : `npm pack makes no ${wrong.join(", ")}`
      }
      const script = verb === "run" ? name : verb
      if (script === undefined || packageJson(dir).scripts?.[script] === undefined) {
        return `${relative(root, dir) || "the root"} has no npm script ${script}`
      }
      // Files after `--` are read in the workspace's directory.
      const passed = args.includes("--") ? args.slice(args.indexOf("--") + 1) : []
      const missing = passed.filter((arg) => /\.\w+$/.test(arg) && !existsSync(join(dir, arg)))
      return missing.length === 0 ? undefined : `no ${missing.join(", ")} in ${relative(root, dir)}`
    }
    case "npx": {
      const [name, ...rest] = args
      if (name === undefined || !existsSync(join(bin, name))) {
        return `npx ${name} is not a bin of this repository: npx would fetch it from the registry`
      }
      if (name === "walletgate") {
        // The workspace's own bin, never the registry's; its help for the command shown runs here.
        if (!realpathSync(join(bin, name)).startsWith(join(root, "packages", "core"))) return "not the workspace's CLI"
        const topic = rest.filter((word) => /^[a-z]+$/.test(word)).slice(0, 2)
        execFileSync(process.execPath, [join(bin, name), ...topic, "--help"], { stdio: "pipe" })
        return undefined
      }
      const files = rest.filter((arg) => arg.includes("/"))
      const missing = files.filter((file) => !within(file))
      return missing.length === 0 ? undefined : `no ${missing.join(", ")}`
    }
    default:
      return `a command this test does not know: ${tool}`
  }
}

describe("the commands the READMEs show", () => {
  const commands = markdown.flatMap(commandsOf)

  it("are found (the READMEs have shell blocks)", () => {
    expect(commands.length).toBeGreaterThan(10)
  })

  for (const file of markdown) {
    it(`run as written on a fresh clone: ${file}`, () => {
      const wrong = commands
        .filter((command) => command.file === file)
        .flatMap((command) => {
          const problem = check(command)
          return problem === undefined ? [] : [`${command.line} → ${problem}`]
        })
      expect(wrong).toEqual([])
    })
  }
})
