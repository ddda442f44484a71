// Helpers for tests that serve gateways over real HTTP (Express on 127.0.0.1).
import type { Gateway } from "@walletgate/core"
import { serveListener } from "@walletgate/core/testing"
import { walletgate } from "@walletgate/express"
import express from "express"

/** A gateway behind its own Express server on a free port. */
export interface Served {
  readonly url: string
  /** POSTs `body` as JSON to `path` below the gateway, with `headers` besides. */
  readonly post: (path: string, body: unknown, headers?: Readonly<Record<string, string>>) => Promise<Response>
  /** GETs `path` below the gateway. */
  readonly get: (path: string, headers?: Readonly<Record<string, string>>) => Promise<Response>
  /** Closes the server, then disposes of the gateway (and so of its Redis connection). */
  readonly close: () => Promise<void>
}

/** Serves `gateway` with Express on 127.0.0.1 and a free port. */
export const serve = async (gateway: Gateway): Promise<Served> => {
  const server = await serveListener(express().use(walletgate(gateway)))
  const { url } = server
  return {
    url,
    post: (path, body, headers = {}) =>
      fetch(`${url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body)
      }),
    get: (path, headers = {}) => fetch(`${url}${path}`, { headers }),
    close: async () => {
      await server.close()
      await gateway.dispose()
    }
  }
}

/** Repeats `attempt` until it returns true, at most for `ms`; fails with `what` after that. */
export const eventually = async (what: string, attempt: () => Promise<boolean>, ms = 5000): Promise<void> => {
  const until = Date.now() + ms
  while (!(await attempt())) {
    if (Date.now() > until) throw new Error(`${what}: not within ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** The path of phone sign-in's first step (send a code). */
export const SIGN_IN = "/functions/v1/signInWithOTP"
/** The path of phone sign-in's second step (verify the code). */
export const VERIFY = "/functions/v1/verifyOTP"
