import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { anvilDevKey } from "../../src/devnet/local"
import type { SharedDevnet } from "./shared"

/** The built CLI, as operators run it (`npm test` builds before testing). */
export const walletgateCli = fileURLToPath(new URL("../../dist/cli.js", import.meta.url))

/** A running `walletgate paymaster serve` child process. */
export interface PaymasterServe {
  /** Where it answers ERC-7677. */
  readonly url: string
  readonly stop: () => Promise<void>
}

/** Writes a networks file of the devnet (`anvil`) with `paymaster` as its paymaster entry; returns its path and cleanup. */
export const devnetNetworksFile = (devnet: SharedDevnet, paymaster: Record<string, unknown>) => {
  const folder = mkdtempSync(join(tmpdir(), "walletgate-paymaster-"))
  const file = join(folder, "networks.json")
  writeFileSync(
    file,
    JSON.stringify({
      networks: {
        anvil: {
          chainId: devnet.anvil.chainId,
          testnet: true,
          rpcUrls: [devnet.anvil.rpcUrl],
          bundlerUrl: devnet.bundlerUrl,
          paymaster
        }
      }
    })
  )
  return { file, remove: () => rmSync(folder, { recursive: true, force: true }) }
}

/**
 * Starts `walletgate paymaster serve --network anvil` for the devnet's VerifyingPaymaster (its signer, dev account 4,
 * from the variable the file names) on a free port of 127.0.0.1, with `apps` (`<id>=<gas>`); resolves once it prints
 * its URL.
 */
export const startPaymasterServe = async (
  devnet: SharedDevnet,
  apps: ReadonlyArray<string>
): Promise<PaymasterServe> => {
  const networks = devnetNetworksFile(devnet, {
    address: devnet.deployment.contracts.verifyingPaymaster,
    signerKey: { env: "DEVNET_PAYMASTER_KEY" }
  })
  const child: ChildProcess = spawn(
    process.execPath,
    [
      walletgateCli,
      "paymaster",
      "serve",
      "--network",
      "anvil",
      ...apps.flatMap((app) => ["--app", app]),
      "--port",
      "0"
    ],
    {
      env: {
        PATH: process.env.PATH ?? "",
        WALLETGATE_NETWORKS_FILE: networks.file,
        DEVNET_PAYMASTER_KEY: anvilDevKey(4)
      },
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  let output = ""
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`paymaster serve did not start: ${output}`)), 20_000)
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString()
      const found = /^(http:\/\/\S+)$/m.exec(output)?.[1]
      if (found !== undefined) {
        clearTimeout(timer)
        resolve(found)
      }
    })
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString()
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`paymaster serve exited ${code}: ${output}`))
    })
  })
  return {
    url,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve))
        child.kill("SIGTERM")
        await exited
      }
      networks.remove()
    }
  }
}
