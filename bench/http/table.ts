// The Markdown tables the benchmarks print (and the README quotes).

/** A Markdown table: the first `textColumns` columns aligned left, the numbers after them right. */
export const table = (
  header: ReadonlyArray<string>,
  lines: ReadonlyArray<ReadonlyArray<string>>,
  textColumns: number
) => {
  const widths = header.map((title, i) => Math.max(title.length, ...lines.map((line) => line[i]?.length ?? 0)))
  const align = (cell: string, i: number) =>
    i < textColumns ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)
  const format = (cells: ReadonlyArray<string>) => `| ${cells.map(align).join(" | ")} |`
  return [format(header), format(widths.map((width) => "-".repeat(width))), ...lines.map(format)].join("\n")
}
