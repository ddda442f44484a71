// walletgate's CPU cost per request beside the bare framework doing the same work, per request kind, and, in Express,
// beside the peer (better-auth's phone-number plugin) for the sign-in's two steps.
//
// For each framework, walletgate's server, the bare one and in Express the peer (bench/http/server.ts) run at once,
// each in a process of its own, each on one keep-alive connection, one request at a time. Every request kind is
// warmed up on each; then, per kind, ROUNDS rounds each time a BLOCK of requests on each server in turn (the order
// rotating), each server reading its own CPU time: the machine's fast and slow moments fall on every side alike. The
// figure is user CPU per request, summed over all blocks (a server's system time over loopback also carries the
// client's wake-up). A request that runs a domain effect is for a fresh phone; a verification's code is sent (and
// read from the server) before its block, outside the measure. The bare rows are information; the goals are the
// peer's: walletgate at most PEER_GOALS × its CPU per request.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { Agent, request as httpRequest } from "node:http"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import {
  type Framework,
  frameworks,
  type PhoneRequest,
  type RequestKind,
  requestKinds,
  SIGN_IN_PATH,
  testPhone
} from "./http/requests.ts"
import { keepResults, printTable } from "./table.ts"

/** Blocks of warm-up per kind and server, before the measure. */
const WARM_UP_BLOCKS = 8
const BLOCK = 200
const ROUNDS = 12
/** walletgate's CPU per request at most this share of the peer's, per request kind. */
const PEER_GOALS: Readonly<Record<string, number>> = { "POST signInWithOTP": 0.6, "POST verifyOTP": 0.3 }
const serverScript = fileURLToPath(new URL("./http/server.ts", import.meta.url))

/** Which server: walletgate's, the bare framework's or the peer's. */
type Side = "walletgate" | "bare" | "better-auth"

interface Server {
  readonly side: Side
  /** Sends `count` requests of `kind` and gives the server's user CPU µs per request. */
  readonly measure: (kind: RequestKind, count: number) => Promise<number>
  readonly stop: () => Promise<void>
}

const signIn = requestKinds.find((kind) => kind.method === "POST" && kind.path === SIGN_IN_PATH)

const start = async (framework: Framework, side: Side): Promise<Server> => {
  const fresh = requestKinds.filter((kind) => kind.body !== undefined).length
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [serverScript, framework, side], {
    env: { ...process.env, TEST_PHONES: String(fresh * BLOCK * (WARM_UP_BLOCKS + ROUNDS)) }
  })
  let errors = ""
  child.stderr.on("data", (chunk: Buffer) => {
    errors = (errors + chunk.toString()).slice(-4_000)
  })
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const nextLine = async () => {
    const line = await lines.next()
    if (line.done === true) throw new Error(`${side} ${framework} exited: ${errors}`)
    return JSON.parse(line.value) as Record<string, unknown>
  }
  const ask = (command: string) => {
    child.stdin.write(`${command}\n`)
    return nextLine()
  }
  const port = Number((await nextLine()).port)
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  let phones = 0
  /** The kind's request as this side takes it. */
  const requestOf = (kind: RequestKind): PhoneRequest | undefined =>
    side === "better-auth" ? kind.peer : kind.body === undefined ? undefined : { path: kind.path, body: kind.body }
  const once = (kind: RequestKind, body: string | undefined) =>
    new Promise<void>((resolve, reject) => {
      const headers = {
        ...kind.headers,
        ...(body === undefined ? {} : { "content-type": "application/json", "content-length": `${body.length}` })
      }
      const path = requestOf(kind)?.path ?? kind.path
      const request = httpRequest({ host: "127.0.0.1", port, path, method: kind.method, agent, headers })
      request.once("response", (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.once("end", () =>
          response.statusCode === kind.status
            ? resolve()
            : reject(
                new Error(
                  `${side} ${framework}, ${kind.name}: ${response.statusCode}, not ${kind.status}: ${Buffer.concat(chunks).toString().slice(0, 300)}`
                )
              )
        )
      })
      request.once("error", reject)
      request.end(body)
    })
  const cpu = async () => Number((await ask("cpu")).user ?? 0)
  return {
    side,
    measure: async (kind, count) => {
      // The bodies, each for a fresh phone; a verification's code sent first. The peer's memory tables emptied, so
      // that their linear scans and the whole-table copy of each transaction do not grow with the run.
      await ask("prune")
      const request = requestOf(kind)
      const bodies: Array<string | undefined> = []
      for (let n = 0; n < count; n++) {
        if (request === undefined) {
          bodies.push(undefined)
          continue
        }
        const phone = testPhone(phones++)
        let code = ""
        if (kind.afterSend === true && signIn !== undefined) {
          await once(signIn, requestOf(signIn)?.body(phone, ""))
          code = String((await ask(`code ${phone}`)).code)
        }
        bodies.push(request.body(phone, code))
      }
      const before = await cpu()
      for (const body of bodies) await once(kind, body)
      return ((await cpu()) - before) / count
    },
    stop: async () => {
      agent.destroy()
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.stdin.end()
      await exited
    }
  }
}

/** One row of the table: user CPU µs per request on each side (the peer's where it was measured). */
interface Row {
  readonly framework: Framework
  readonly request: string
  readonly us: Readonly<Partial<Record<Side, number>>>
}

const measure = async (framework: Framework): Promise<Array<Row>> => {
  const servers = [await start(framework, "walletgate"), await start(framework, "bare")]
  if (framework === "Express 5") servers.push(await start(framework, "better-auth"))
  try {
    const sidesOf = (kind: RequestKind) =>
      servers.filter((server) => server.side !== "better-auth" || kind.peer !== undefined)
    for (const kind of requestKinds) {
      for (const server of sidesOf(kind)) {
        for (let warm = 0; warm < WARM_UP_BLOCKS; warm++) await server.measure(kind, BLOCK)
      }
    }
    const rows: Array<Row> = []
    for (const kind of requestKinds) {
      const sides = sidesOf(kind)
      const sums = new Map<Side, number>()
      for (let round = 0; round < ROUNDS; round++) {
        for (let turn = 0; turn < sides.length; turn++) {
          const server = sides[(round + turn) % sides.length]
          if (server === undefined) continue
          sums.set(server.side, (sums.get(server.side) ?? 0) + (await server.measure(kind, BLOCK)))
        }
      }
      rows.push({
        framework,
        request: kind.name,
        us: Object.fromEntries([...sums].map(([side, sum]) => [side, sum / ROUNDS]))
      })
    }
    return rows
  } finally {
    for (const server of servers) await server.stop()
  }
}

const us = (value: number | undefined) => (value === undefined ? "-" : value.toFixed(1))

/** Measures every framework, prints the tables and writes `bench/results/http.json`. */
export const run = async (): Promise<void> => {
  const rows: Array<Row> = []
  for (const framework of frameworks) rows.push(...(await measure(framework)))
  printTable(
    ["framework", "request", "walletgate µs", "bare µs", "×", "+µs"],
    rows.map(({ framework, request, us: { walletgate = 0, bare = 0 } }) => [
      framework,
      request,
      us(walletgate),
      us(bare),
      (walletgate / bare).toFixed(2),
      `${walletgate >= bare ? "+" : ""}${(walletgate - bare).toFixed(1)}`
    ]),
    2
  )
  console.log("\nuser CPU per request, walletgate beside the bare framework doing the same work (information)\n")
  const peerRows = rows.filter((row) => row.us["better-auth"] !== undefined)
  const peer = peerRows.map(({ framework, request, us: { walletgate = 0, bare, "better-auth": theirs = 0 } }) => {
    const goal = PEER_GOALS[request] ?? Number.NaN
    const ratio = walletgate / theirs
    return { framework, request, walletgate, bare, betterAuth: theirs, ratio, goal, met: ratio <= goal }
  })
  printTable(
    ["framework", "request", "walletgate µs", "bare µs", "better-auth µs", "× better-auth", "goal", ""],
    peer.map((row) => [
      row.framework,
      row.request,
      us(row.walletgate),
      us(row.bare),
      us(row.betterAuth),
      row.ratio.toFixed(2),
      `≤ ${row.goal.toFixed(2)}×`,
      row.met ? "met" : "not met"
    ]),
    2
  )
  console.log(
    "\nuser CPU per request beside better-auth's phone-number plugin (memory adapter, its rate limit off; walletgate's " +
      "per-IP send limit raised); a fresh phone per request"
  )
  keepResults("http", { rows, peer })
}
