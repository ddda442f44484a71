// walletgate's CPU cost per request beside the bare framework doing the same work, per request kind.
//
// For each framework, walletgate's server and the bare one (bench/http/server.ts) run at once, each in a process of
// its own, each on one keep-alive connection, one request at a time. Every request kind is warmed up on both; then,
// per kind, ROUNDS rounds each time a BLOCK of requests on one server and then on the other (the order alternating),
// each server reading its own CPU time: the machine's fast and slow moments fall on both sides alike. The figure is
// user CPU per request, summed over all blocks (a server's system time over loopback also carries the client's
// wake-up). The goals: a request that runs no domain effect costs at most 10 % more than the bare framework's own
// answer; one that runs a domain effect at most 20 µs more than the bare app doing the same work.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { Agent, request as httpRequest } from "node:http"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { type Framework, frameworks, type RequestKind, requestKinds } from "./http/requests.ts"
import { keepResults, printTable } from "./table.ts"

const WARM_UP = 1_500
const BLOCK = 200
const ROUNDS = 12
const RATIO_GOAL = 1.1
const EXTRA_US_GOAL = 20
const serverScript = fileURLToPath(new URL("./http/server.ts", import.meta.url))

interface Server {
  readonly send: (kind: RequestKind, count: number) => Promise<void>
  /** User and system CPU µs the server has used so far. */
  readonly cpu: () => Promise<{ readonly user: number; readonly system: number }>
  readonly stop: () => Promise<void>
}

const start = async (framework: Framework, side: "walletgate" | "bare"): Promise<Server> => {
  const bodies = requestKinds.filter((kind) => kind.body !== undefined).length
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [serverScript, framework, side], {
    env: { ...process.env, TEST_PHONES: String(bodies * (WARM_UP + BLOCK * ROUNDS) + 1) }
  })
  let errors = ""
  child.stderr.on("data", (chunk: Buffer) => {
    errors = (errors + chunk.toString()).slice(-4_000)
  })
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const nextLine = async () => {
    const line = await lines.next()
    if (line.done === true) throw new Error(`${side} ${framework} exited: ${errors}`)
    return JSON.parse(line.value) as Record<string, number>
  }
  const { port } = await nextLine()
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  let sent = 0
  const once = (kind: RequestKind) =>
    new Promise<void>((resolve, reject) => {
      const body = kind.body?.(sent++)
      const headers = {
        ...kind.headers,
        ...(body === undefined ? {} : { "content-type": "application/json", "content-length": `${body.length}` })
      }
      const request = httpRequest({ host: "127.0.0.1", port, path: kind.path, method: kind.method, agent, headers })
      request.once("response", (response) => {
        response.resume()
        response.once("end", () =>
          response.statusCode === kind.status
            ? resolve()
            : reject(new Error(`${side} ${framework}, ${kind.name}: ${response.statusCode}, not ${kind.status}`))
        )
      })
      request.once("error", reject)
      request.end(body)
    })
  return {
    send: async (kind, count) => {
      for (let n = 0; n < count; n++) await once(kind)
    },
    cpu: async () => {
      child.stdin.write("cpu\n")
      const { user = 0, system = 0 } = await nextLine()
      return { user, system }
    },
    stop: async () => {
      agent.destroy()
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.stdin.end()
      await exited
    }
  }
}

/** One row of the table. */
interface Row {
  readonly framework: Framework
  readonly request: string
  readonly domainEffect: boolean
  readonly walletgateUs: number
  readonly bareUs: number
  readonly ratio: number
  readonly extraUs: number
  readonly met: boolean
}

const measure = async (framework: Framework): Promise<Array<Row>> => {
  const walletgate = await start(framework, "walletgate")
  const bare = await start(framework, "bare")
  try {
    for (const kind of requestKinds) {
      await walletgate.send(kind, WARM_UP)
      await bare.send(kind, WARM_UP)
    }
    const userPerRequest = async (server: Server, kind: RequestKind) => {
      const before = await server.cpu()
      await server.send(kind, BLOCK)
      return ((await server.cpu()).user - before.user) / BLOCK
    }
    const rows: Array<Row> = []
    for (const kind of requestKinds) {
      let ours = 0
      let theirs = 0
      for (let round = 0; round < ROUNDS; round++) {
        if (round % 2 === 0) {
          ours += await userPerRequest(walletgate, kind)
          theirs += await userPerRequest(bare, kind)
        } else {
          theirs += await userPerRequest(bare, kind)
          ours += await userPerRequest(walletgate, kind)
        }
      }
      const walletgateUs = ours / ROUNDS
      const bareUs = theirs / ROUNDS
      const domainEffect = kind.body !== undefined
      const ratio = walletgateUs / bareUs
      const extraUs = walletgateUs - bareUs
      rows.push({
        framework,
        request: kind.name,
        domainEffect,
        walletgateUs,
        bareUs,
        ratio,
        extraUs,
        met: domainEffect ? extraUs <= EXTRA_US_GOAL : ratio <= RATIO_GOAL
      })
    }
    return rows
  } finally {
    await walletgate.stop()
    await bare.stop()
  }
}

/** Measures every framework, prints the table and writes `bench/results/http.json`. */
export const run = async (): Promise<void> => {
  const rows: Array<Row> = []
  for (const framework of frameworks) rows.push(...(await measure(framework)))
  const cells = rows.map((row) => [
    row.framework,
    row.request,
    row.walletgateUs.toFixed(1),
    row.bareUs.toFixed(1),
    row.ratio.toFixed(2),
    `${row.extraUs >= 0 ? "+" : ""}${row.extraUs.toFixed(1)}`,
    row.domainEffect ? `≤ +${EXTRA_US_GOAL} µs` : `≤ ${RATIO_GOAL.toFixed(2)}×`,
    row.met ? "met" : "not met"
  ])
  printTable(["framework", "request", "walletgate µs", "bare µs", "×", "+µs", "goal", ""], cells, 2)
  console.log(`\nuser CPU per request; ${rows.filter((row) => row.met).length} of ${rows.length} rows meet their goal`)
  keepResults("http", { rows })
}
