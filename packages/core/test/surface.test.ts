import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"
import { entries } from "../tsup.config"

const PACKAGE = fileURLToPath(new URL("..", import.meta.url))

/** `package.json` `exports`: subpath → the built file it names. */
const packageExports = (): Record<string, string> => {
  const manifest = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8")) as {
    exports: Record<string, string | { types: string; default: string }>
  }
  return Object.fromEntries(
    Object.entries(manifest.exports).flatMap(([subpath, target]) =>
      typeof target === "string" ? [] : [[subpath, target.default] as const]
    )
  )
}

const program = ts.createProgram(
  Object.values(entries).map((file) => join(PACKAGE, file)),
  { strict: true, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, noEmit: true }
)
const checker = program.getTypeChecker()

/** The names an entry exports, each with whether its declaration carries a TSDoc comment. */
const exportsOf = (file: string): Array<{ name: string; documented: boolean }> => {
  const source = program.getSourceFile(join(PACKAGE, file))
  const module = source === undefined ? undefined : checker.getSymbolAtLocation(source)
  if (module === undefined) throw new Error(`no module symbol for ${file}`)
  return checker.getExportsOfModule(module).map((symbol) => {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
    const declarations = target.declarations ?? []
    return {
      name: symbol.name,
      documented:
        declarations.length > 0 &&
        declarations.every((declaration) => ts.getJSDocCommentsAndTags(declaration).some(ts.isJSDoc))
    }
  })
}

describe("the public surface of @walletgate/core", () => {
  it("names every entry in package.json exports, and each is built", () => {
    expect(Object.values(packageExports()).sort()).toEqual(
      Object.keys(entries)
        .map((name) => `./dist/${name}.js`)
        .sort()
    )
  })

  it("keeps the main entry under 80 names", () => {
    const names = exportsOf(entries.index).map((entry) => entry.name)
    expect(names.length).toBeGreaterThan(40)
    expect(names.length).toBeLessThan(80)
  })

  it("exports at most 200 distinct runtime names across its entries", async () => {
    const loaded = await Promise.all(
      Object.keys(packageExports()).map(async (subpath) => {
        const specifier = subpath === "." ? "@walletgate/core" : `@walletgate/core/${subpath.slice(2)}`
        return Object.keys(await import(/* @vite-ignore */ specifier))
      })
    )
    expect(loaded).toHaveLength(Object.keys(entries).length)
    const names = new Set(loaded.flat())
    expect(names.size).toBeLessThanOrEqual(200)
  })

  it("exports names one by one: no entry re-exports a whole module", () => {
    const starred = Object.values(entries).filter((file) =>
      /^export \*/m.test(readFileSync(join(PACKAGE, file), "utf8"))
    )
    expect(starred).toEqual([])
  })

  it.each(Object.entries(entries))("documents every name %s exports with a TSDoc comment", (_, file) => {
    const undocumented = exportsOf(file)
      .filter((entry) => !entry.documented)
      .map((entry) => entry.name)
    expect(undocumented).toEqual([])
  })

  it("keeps anvil, the bundler's start-up and contract bytecode to the devnet entry", () => {
    const devnetOnly = [
      "anvilDevKey",
      "anvilMnemonic",
      "startAnvil",
      "startAlto",
      "startLocalNetwork",
      "deployContracts",
      "testTokenArtifact"
    ]
    const elsewhere = Object.entries(entries)
      .filter(([name]) => name !== "devnet/index")
      .flatMap(([name, file]) =>
        exportsOf(file)
          .filter((entry) => devnetOnly.includes(entry.name))
          .map((entry) => `${name}: ${entry.name}`)
      )
    expect(elsewhere).toEqual([])
  })
})
