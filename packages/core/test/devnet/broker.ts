// vitest's globalSetup: one devnet (anvil + alto + the ERC-4337 contracts and a paymaster) per vitest worker,
// started the first time a test file of that worker asks for it, and stopped when the run ends. Test files ask
// through `sharedDevnet()` (./shared.ts), which reads the broker's address from `inject("devnetBroker")`.
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import type { TestProject } from "vitest/node"
import { type Devnet, startDevnet } from "../../src/devnet/devnet"
import type { DevnetDescription } from "./shared"

declare module "vitest" {
  interface ProvidedContext {
    /** The devnet broker's URL: `GET <url>/devnet/<VITEST_POOL_ID>` answers that worker's devnet. */
    readonly devnetBroker: string
  }
}

/** What a test file is told about its worker's devnet: addresses and keys of the local chain only, never a secret. */
const describeDevnet = (devnet: Devnet): DevnetDescription => ({
  rpcUrl: devnet.anvil.rpcUrl,
  chainId: devnet.anvil.chainId,
  anvilPort: devnet.anvil.port,
  bundlerUrl: devnet.bundlerUrl,
  altoPort: devnet.alto.port,
  altoStartupMs: devnet.alto.startupMs,
  contracts: devnet.deployment.contracts,
  network: devnet.network
})

/** Starts the broker; the returned function (vitest's teardown) stops every devnet it started, then the broker. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const devnets = new Map<string, Promise<Devnet>>()
  const server = createServer((request, response) => {
    const worker = /^\/devnet\/([0-9]{1,4})$/.exec(request.url ?? "")?.[1]
    if (worker === undefined) {
      response.writeHead(404).end()
      return
    }
    let devnet = devnets.get(worker)
    if (devnet === undefined) {
      devnet = startDevnet()
      devnets.set(worker, devnet)
    }
    devnet.then(
      (started) =>
        response
          .writeHead(200, { "content-type": "application/json" })
          .end(
            JSON.stringify(describeDevnet(started), (_, value) => (typeof value === "bigint" ? String(value) : value))
          ),
      (error: unknown) => {
        // The next file of this worker tries again.
        devnets.delete(worker)
        response.writeHead(500, { "content-type": "text/plain" }).end(String(error))
      }
    )
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  project.provide("devnetBroker", `http://127.0.0.1:${(server.address() as AddressInfo).port}`)
  return async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
    await Promise.all(
      [...devnets.values()].map((devnet) =>
        devnet.then(
          (started) => started.stop(),
          () => undefined
        )
      )
    )
  }
}
