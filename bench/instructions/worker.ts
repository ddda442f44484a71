// Child process of bench/instructions.ts: `node --single-threaded bench/instructions/worker.ts <server> <request>
// <count> <reference JSON>` answers `count` requests in process, one after the other, through walletgate's
// `gateway.handle` (the way the node:http bridge of bench/http/targets.ts hands them over) or through the bare
// logic of bench/http/bare.ts (with its in-memory state), and exits. bench/instructions.ts runs it under
// valgrind twice with two counts: the difference is what the extra requests cost, start-up left out.
import { type GatewayRequest, readBodyWithin } from "@walletgate/core"
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

const main = async () => {
  const [server, name, countText, referenceText] = process.argv.slice(2)
  const count = Number(countText)
  if ((server !== "walletgate" && server !== "bare + state") || !isRequest(name) || !Number.isInteger(count)) {
    throw new Error("usage: worker.ts <walletgate | bare + state> <request> <count> <reference JSON>")
  }
  const { method, path } = instructionRequests[name]
  const encoder = new TextEncoder()
  const headers = { host: "127.0.0.1", "content-type": "application/json", "content-length": "26" }
  let phone = 0
  const body = () => [encoder.encode(signInBody(phone++))]

  if (server === "bare + state") {
    const bare = bareServer(JSON.parse(referenceText ?? "{}") as Reference, { withState: true })
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
    return
  }

  const gateway = await benchGateway()
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
  await gateway.dispose()
}

if (import.meta.main) await main()
