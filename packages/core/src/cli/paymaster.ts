// `walletgate paymaster serve --network <name>`: an ERC-7677 paymaster web service for the operator's VerifyingPaymaster,
// as a process of its own, for gateways configured with `"paymaster": { "url": … }`.
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { privateKeyToAccount } from "viem/accounts"
import type { NetworkSettings } from "../config/networksFile"
import { canonicalSafe4337 } from "../deploy/contractPackages"
import { makePaymasterServer, paymasterServerCodes } from "../operations/paymasterServer"

/** What `walletgate paymaster --help` prints. */
export const paymasterHelp = `walletgate paymaster serve: serves ERC-7677 (pm_getPaymasterStubData, pm_getPaymasterData) over HTTP for the
operator's VerifyingPaymaster of a network of the networks file, signing with its signerKey (read from the variable the
file names). It sponsors only the apps it is given (the "app" of a request's context), each up to a gas allowance per
window, counted when it signs; any other request is refused with a JSON-RPC error.

usage:
  walletgate paymaster serve --network <name> --app <id>=<gas> [--app …] [--window <seconds>] [--port <n>] [--host <ip>]
options:
  --network <name>    a network of $WALLETGATE_NETWORKS_FILE whose paymaster has an address and a signerKey
  --app <id>=<gas>    an app it sponsors and its gas per window, e.g. --app wgc_shop=30000000 (repeat for several)
  --window <seconds>  the window of the allowances (default 3600)
  --port <n>          the port (default 4337; 0: any free port)
  --host <ip>         the address to listen on (default 127.0.0.1)`

/** Options of {@link servePaymaster}, as the command line gives them. */
export interface PaymasterServeArgs {
  readonly apps: ReadonlyArray<string>
  readonly window: string | undefined
  readonly port: string | undefined
  readonly host: string | undefined
}

/** The most bytes of a request body read. */
const maxRequestBytes = 262_144

/** `--app id=gas` options as the allowances map; throws naming the first malformed one. */
const allowances = (apps: ReadonlyArray<string>): ReadonlyMap<string, bigint> => {
  if (apps.length === 0) throw new Error("--app <id>=<gas> is required: the apps this paymaster sponsors")
  const map = new Map<string, bigint>()
  for (const app of apps) {
    const match = /^([A-Za-z0-9_.:-]{1,128})=([1-9][0-9]{0,15})$/.exec(app)
    if (match === null) throw new Error(`--app ${app}: expected <id>=<gas>, e.g. wgc_shop=30000000`)
    map.set(match[1] ?? "", BigInt(match[2] ?? "0"))
  }
  return map
}

/**
 * Serves the network's VerifyingPaymaster over ERC-7677 until SIGINT or SIGTERM; prints the URL it listens on once
 * ready (first line of stdout).
 */
export const servePaymaster = async (settings: NetworkSettings, args: PaymasterServeArgs): Promise<void> => {
  const paymaster = settings.paymaster
  if (paymaster?.address === undefined) {
    throw new Error(
      `network ${settings.slug}: paymaster serve needs the operator's VerifyingPaymaster in the networks file ("paymaster": { "address", "signerKey" })`
    )
  }
  const windowSeconds = args.window === undefined ? 3_600 : Number(args.window)
  if (!Number.isInteger(windowSeconds) || windowSeconds < 1 || windowSeconds > 2_592_000) {
    throw new Error("--window is a whole number of seconds from 1 to 2592000")
  }
  const port = args.port === undefined ? 4_337 : Number(args.port)
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error("--port is a port number")
  const server = makePaymasterServer({
    chainId: settings.chainId,
    entryPoint: canonicalSafe4337().entryPoint.address,
    paymaster: paymaster.address,
    signer: privateKeyToAccount(paymaster.signerKey),
    apps: allowances(args.apps),
    windowSeconds
  })
  const answer = (res: ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
  const http = createServer((req, res) => {
    if (req.method !== "POST") return answer(res, 405, { error: "POST JSON-RPC here" })
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.byteLength
      if (size > maxRequestBytes) {
        answer(res, 413, {
          jsonrpc: "2.0",
          id: null,
          error: { code: paymasterServerCodes.invalidRequest, message: "too large" }
        })
        req.destroy()
        return
      }
      chunks.push(chunk)
    })
    req.on("end", () => {
      if (size > maxRequestBytes) return
      let body: unknown
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      } catch {
        return answer(res, 200, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } })
      }
      server.handle(body).then(
        (result) => answer(res, 200, result),
        () => answer(res, 500, { jsonrpc: "2.0", id: null, error: { code: -32603, message: "internal error" } })
      )
    })
  })
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject)
    http.listen(port, args.host ?? "127.0.0.1", resolve)
  })
  const address = http.address() as AddressInfo
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address
  process.stdout.write(
    `http://${host}:${address.port}\nwalletgate paymaster serve: ${settings.slug} (chain ${settings.chainId}), paymaster ${paymaster.address}, ${args.apps.length} app(s), window ${windowSeconds} s\n`
  )
  await new Promise<void>((resolve) => {
    const stop = () => {
      http.close(() => resolve())
      http.closeAllConnections()
    }
    process.once("SIGINT", stop)
    process.once("SIGTERM", stop)
  })
}
