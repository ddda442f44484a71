// The CLI as operators run it, for the tests of the operator commands: the built bin of @walletgate/core
// (`npm run build -w @walletgate/core -w @walletgate/redis` first), run as a process with an environment of the test's
// own (REDIS_URL, the key prefix, the networks file, the master secret), never the test runner's.
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const bin = fileURLToPath(new URL("../../bin/walletgate.js", import.meta.url))

/** What one run of the CLI answered. */
export interface CliRun {
  readonly status: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs `walletgate ...args` with `env` only (and PATH), resolving with its exit status and outputs. */
export const runCli = (env: Readonly<Record<string, string>>, args: ReadonlyArray<string>) =>
  new Promise<CliRun>((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { env: { PATH: process.env.PATH ?? "", ...env }, encoding: "utf8", timeout: 60_000 },
      (error, stdout, stderr) => {
        const status = error === null ? 0 : typeof error.code === "number" ? error.code : -1
        resolve({ status, stdout, stderr })
      }
    )
  })

/** A networks file of one network, `anvil` (chain 31337), whose node and bundler no test reaches. */
export const writeNetworksFile = (folder: string): string => {
  const path = join(folder, "networks.json")
  const unreachable = "http://127.0.0.1:9"
  writeFileSync(
    path,
    JSON.stringify({
      networks: { anvil: { chainId: 31337, testnet: true, rpcUrls: [unreachable], bundlerUrl: unreachable } }
    })
  )
  return path
}

/**
 * An operator at the CLI against one store, who remembers every secret the CLI showed them and checks that no later
 * output (stdout or stderr, of any command) shows one again, nor its SHA-256.
 */
export const operatorSession = (env: Readonly<Record<string, string>>) => {
  const secrets = new Set<string>()
  const forbidden = () => [...secrets].flatMap((secret) => [secret, createHash("sha256").update(secret).digest("hex")])
  const leaked = (answer: CliRun) =>
    forbidden().filter((secret) => answer.stdout.includes(secret) || answer.stderr.includes(secret))
  return {
    /** Runs a command; its output must show none of the secrets shown before. */
    run: async (...args: ReadonlyArray<string>): Promise<CliRun> => {
      const answer = await runCli(env, args)
      const shown = leaked(answer)
      if (shown.length > 0) throw new Error(`walletgate ${args.join(" ")} showed a secret again`)
      return answer
    },
    /** Runs a command with `--json` that must succeed: its stdout parsed as exactly one JSON value. */
    json: async <A = unknown>(...args: ReadonlyArray<string>): Promise<A> => {
      const answer = await runCli(env, [...args, "--json"])
      if (answer.status !== 0) throw new Error(`walletgate ${args.join(" ")} --json failed: ${answer.stderr}`)
      if (leaked(answer).length > 0) throw new Error(`walletgate ${args.join(" ")} showed a secret again`)
      // JSON.parse refuses anything after the one value (a second value, a stray line).
      return JSON.parse(answer.stdout) as A
    },
    /** Remembers a secret the CLI just showed: no later output may show it. */
    shown: (secret: string) => {
      secrets.add(secret)
    },
    /** The secrets shown so far. */
    secrets: () => [...secrets]
  }
}
