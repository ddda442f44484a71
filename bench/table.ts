// The one way the benchmarks print a table (Markdown, the first `left` columns aligned left, the rest right) and
// keep its figures (`bench/results/<name>.json`).
import { mkdirSync, writeFileSync } from "node:fs"

/** Prints `rows` under `header` as a Markdown table. */
export const printTable = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>, left = 1) => {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)))
  const line = (row: ReadonlyArray<string>) =>
    `| ${row.map((cell, column) => (column < left ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join(" | ")} |`
  console.log(
    [line(header), `|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`, ...rows.map(line)].join("\n")
  )
}

/** Writes `figures` to `bench/results/<name>.json`. */
export const keepResults = (name: string, figures: unknown) => {
  mkdirSync(new URL("./results/", import.meta.url), { recursive: true })
  writeFileSync(new URL(`./results/${name}.json`, import.meta.url), `${JSON.stringify(figures, null, 2)}\n`)
}
