// Child process of bench/instructions.ts: `node --single-threaded bench/instructions/worker.ts <server> <request>
// <reference JSON>` answers requests in process, one after the other, through walletgate's `gateway.handle` (the way
// the node:http bridge of bench/http/targets.ts hands them over) or through the bare logic of bench/http/bare.ts
// (with its in-memory state). It prints `ready` on a line once set up; each line `<n>` on its stdin then has it
// answer n more requests and print `done`, so that bench/instructions.ts, outside valgrind, reads the counter
// between windows; it exits when its stdin closes.
import { createInterface } from "node:readline"
import type { Gateway, GatewayRequest } from "@walletgate/core"
import { readBodyWithin } from "@walletgate/core/adapter"
import { BARE_BODY_LIMIT, bareServer } from "../http/bare.ts"
import { JWKS_PATH, MISSING_PATH, type Reference, SIGN_IN_PATH, signInBody } from "../http/requests.ts"
import { benchGateway } from "../http/targets.ts"

/** The requests measured, by name. */
export const instructionRequests = {
  "GET unknown path (404)": { method: "GET", path: MISSING_PATH },
  "GET JWKS": { method: "GET", path: JWKS_PATH },
  "POST signInWithOTP (test phone)": { method: "POST", path: SIGN_IN_PATH }
} as const

/** The name of a measured request. */
export type InstructionRequest = keyof typeof instructionRequests

/** The two servers compared. */
export type InstructionServer = "walletgate" | "bare + state"

const isRequest = (name: string | undefined): name is InstructionRequest =>
  name !== undefined && Object.hasOwn(instructionRequests, name)

/** Answers `count` requests of one kind, each through one server; the phone of each sign-in another one. */
type Answerer = (count: number) => Promise<void>

const bareAnswerer = (method: string, path: string, reference: Reference, body: () => Array<Uint8Array>): Answerer => {
  const bare = bareServer(reference, { withState: true })
  const headers = { "content-type": "application/json" }
  return async (count) => {
    for (let i = 0; i < count; i++) {
      const answer = bare.isSignIn(method, path)
        ? await bare.signIn(
            headers["content-type"],
            () => readBodyWithin(body(), BARE_BODY_LIMIT),
            "127.0.0.1",
            undefined
          )
        : await Promise.resolve(bare.answer(method, path, undefined))
      if (answer.status >= 500) throw new Error(answer.body)
    }
  }
}

const gatewayAnswerer = (method: string, path: string, gateway: Gateway, body: () => Array<Uint8Array>): Answerer => {
  const headers = { host: "127.0.0.1", "content-type": "application/json", "content-length": "26" }
  return async (count) => {
    for (let i = 0; i < count; i++) {
      const request: GatewayRequest = {
        method,
        path,
        query: new URLSearchParams(""),
        headers: method === "POST" ? headers : { host: headers.host },
        remoteAddress: "127.0.0.1"
      }
      const response =
        method === "POST"
          ? await gateway.handle({ ...request, rawBody: await readBodyWithin(body(), BARE_BODY_LIMIT) })
          : await gateway.handle(request)
      if (response.status >= 500) throw new Error(response.body)
    }
  }
}

const main = async () => {
  const [server, name, referenceText] = process.argv.slice(2)
  if ((server !== "walletgate" && server !== "bare + state") || !isRequest(name)) {
    throw new Error("usage: worker.ts <walletgate | bare + state> <request> <reference JSON>")
  }
  const { method, path } = instructionRequests[name]
  const encoder = new TextEncoder()
  let phone = 0
  const body = () => [encoder.encode(signInBody(phone++))]
  const gateway = server === "walletgate" ? await benchGateway() : undefined
  const answer =
    gateway === undefined
      ? bareAnswerer(method, path, JSON.parse(referenceText ?? "{}") as Reference, body)
      : gatewayAnswerer(method, path, gateway, body)
  process.stdout.write("ready\n")
  // One window at a time: the parent waits for `done` before it asks for the next.
  for await (const line of createInterface({ input: process.stdin })) {
    const count = Number(line)
    if (!Number.isInteger(count) || count < 1) throw new Error(`worker.ts: expected a count, got ${line}`)
    await answer(count)
    process.stdout.write("done\n")
  }
  await gateway?.dispose()
}

if (import.meta.main) await main()
