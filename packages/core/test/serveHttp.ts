// One way for the tests to serve a gateway over real HTTP: behind the Express adapter on 127.0.0.1 and a free port.
import type { Gateway } from "@walletgate/core"
import { serveListener } from "@walletgate/core/testing"
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
  const { url, close } = await serveListener(app)
  return { base: url, close }
}
