// What every command of the CLI shares: its options, how it fails and how it prints (a table or one JSON value).
import { parseArgs } from "node:util"

/** Ends the CLI with `walletgate: <message>` on stderr and exit code 1 (never on stdout: `--json` output is success's). */
export class CliFailure extends Error {
  override readonly name = "CliFailure"
  /** Whether the general usage follows the message (a command line that cannot be read). */
  readonly usage: boolean
  constructor(message: string, usage = false) {
    super(message)
    this.usage = usage
  }
}

/** Fails the command: `walletgate: <message>` on stderr, exit 1. */
export const fail = (message: string, usage = false): never => {
  throw new CliFailure(message, usage)
}

/** The options of every command (each reads those it knows; `--help` is answered before any runs). */
const OPTIONS = {
  network: { type: "string", multiple: true },
  account: { type: "string", multiple: true },
  mode: { type: "string" },
  file: { type: "string" },
  deposit: { type: "string" },
  stake: { type: "string" },
  "unstake-delay": { type: "string" },
  "new-paymaster": { type: "boolean" },
  name: { type: "string" },
  providers: { type: "string" },
  "test-mode": { type: "boolean" },
  grant: { type: "string" },
  revoke: { type: "string" },
  key: { type: "string" },
  plan: { type: "string" },
  "co-owner": { type: "string" },
  // Several for `paymaster serve` (`--app <id>=<gas>`, repeated); one for `budgets` (`singleOption`).
  app: { type: "string", multiple: true },
  window: { type: "string" },
  port: { type: "string" },
  host: { type: "string" },
  "gas-per-day": { type: "string" },
  since: { type: "string" },
  limit: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" }
} as const

/** The command line, read. */
export interface Invocation {
  readonly values: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>["values"]
  readonly positionals: ReadonlyArray<string>
}

/** Reads the command line (`process.argv`); fails naming an unknown or malformed option. */
export const readCommandLine = (args: ReadonlyArray<string>): Invocation => {
  try {
    const { values, positionals } = parseArgs({ args: [...args], allowPositionals: true, options: OPTIONS })
    return { values, positionals }
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error), true)
  }
}

/** Prints a command's result: `json` as one JSON value with `--json`, else the human lines `human` makes. */
export const output = (invocation: Invocation, json: unknown, human: () => string): void => {
  process.stdout.write(invocation.values.json === true ? `${JSON.stringify(json, null, 2)}\n` : `${human()}\n`)
}

/** The one positional argument a command takes (`apps revoke <clientId>`), or a failure naming it. */
/** The one value of a repeatable option (`--app` of `budgets`), or undefined; fails when it is given twice. */
export const singleOption = (values: ReadonlyArray<string> | undefined, name: string): string | undefined => {
  if (values !== undefined && values.length > 1) fail(`--${name} is given once here`)
  return values?.[0]
}

export const argument = (invocation: Invocation, what: string): string => {
  const [, , value, extra] = invocation.positionals
  if (extra !== undefined) fail(`unexpected argument "${extra.slice(0, 64)}"`)
  return value ?? fail(`${what} is required`)
}

/** A whole number option (`--limit 10`), or undefined when not given; fails when it is not one in range. */
export const wholeOption = (
  invocation: Invocation,
  option: "limit" | "gas-per-day",
  minimum: number,
  maximum: number
): number | undefined => {
  const text = invocation.values[option]
  if (text === undefined) return undefined
  const value = /^[0-9]{1,16}$/.test(text) ? Number(text) : Number.NaN
  return Number.isSafeInteger(value) && value >= minimum && value <= maximum
    ? value
    : fail(`--${option} is a whole number from ${minimum} to ${maximum}`)
}

/** Rows as aligned columns (a header first); `empty` when there is none. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>, empty: string) => {
  if (rows.length === 0) return empty
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join("  ")
      .trimEnd()
  return [line(header), ...rows.map(line)].join("\n")
}

/** The help of a command group: the text for the group itself and for each of its commands, by `group command`. */
export type HelpTexts = Readonly<Record<string, string>>

/** What is said after each secret printed for people: it is not shown again. */
export const SHOWN_ONCE = "This is the only time it is shown: it is stored as a hash and cannot be read back."

/** Fails naming the unknown command of a group (`walletgate apps frob`). */
export const unknown = (group: string, invocation: Invocation): never =>
  fail(
    invocation.positionals[1] === undefined
      ? `${group} needs a command (walletgate ${group} --help)`
      : `unknown command "${group} ${invocation.positionals[1].slice(0, 64)}" (walletgate ${group} --help)`
  )
