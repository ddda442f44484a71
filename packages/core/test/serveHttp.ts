// One way for the tests to serve a gateway over real HTTP: behind the Express adapter on 127.0.0.1 and a free port.
import type { AddressInfo } from "node:net"
import type { Gateway } from "@walletgate/core"
import { walletgate } from "@walletgate/express"
import express from "express"

/** A gateway served over HTTP: its origin (`http://127.0.0.1:<port>`) and how to stop serving it. */
export interface Served {
  readonly base: string
  readonly close: () => Promise<void>
}

/** Serves `gateway` behind the Express adapter (under `mount`, when given) on 127.0.0.1 and a free port. */
export const serveOverHttp = async (gateway: Gateway, mount?: string): Promise<Served> => {
  const app = express()
  if (mount === undefined) app.use(walletgate(gateway))
  else app.use(mount, walletgate(gateway))
  const server = app.listen(0, "127.0.0.1")
  await new Promise<void>((resolve) => server.once("listening", () => resolve()))
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}
