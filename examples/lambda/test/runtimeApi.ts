// A loopback Lambda Runtime API and the runtime process that polls it: the way AWS runs a function, on this machine.
// The Runtime API (version 2018-06-01) is a small HTTP protocol: the runtime asks `GET …/invocation/next` and waits
// for an event, answers it with `POST …/invocation/<id>/response` (or `…/error`), and reports a failed init with
// `POST …/init/error`. The runtime is AWS's own Node client, `aws-lambda-ric` (the code of the `nodejs22.x` image's
// /var/runtime), when it is built here; otherwise a minimal loop that import()s the handler and speaks the same
// protocol, and `runtimeKind` says so. Plain TypeScript that Node runs as is: bench/lambda.ts imports it too.
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"

const API = "/2018-06-01/runtime"

/** What the runtime posted for one event: its answer (`response`) or the error it reported. */
export interface Answer {
  readonly kind: "response" | "error"
  readonly body: unknown
  /** `Date.now()` when the answer reached the Runtime API. */
  readonly at: number
}

/** A Runtime API on 127.0.0.1 that hands events to one runtime process, one at a time. */
export interface RuntimeApi {
  /** `host:port`, the runtime's `AWS_LAMBDA_RUNTIME_API`. */
  readonly address: string
  /** Hands `event` to the runtime at its next `GET …/next`; resolves to what it posted back. */
  readonly invoke: (event: unknown) => Promise<Answer>
  /** Resolves once the runtime is waiting for its next event (a `GET …/next` is open). */
  readonly waiting: () => Promise<void>
  /** The error the runtime reported for its init (`POST …/init/error`), if any. */
  readonly initError: () => unknown
  readonly stop: () => Promise<void>
}

const readBody = async (request: IncomingMessage): Promise<unknown> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  const text = Buffer.concat(chunks).toString("utf8")
  try {
    return text === "" ? undefined : JSON.parse(text)
  } catch {
    return text
  }
}

/** Starts a Runtime API on a free port of 127.0.0.1. */
export const startRuntimeApi = async (): Promise<RuntimeApi> => {
  let parked: ServerResponse | undefined
  const queued: Array<{ readonly id: string; readonly event: unknown }> = []
  const pending = new Map<string, (answer: Answer) => void>()
  let waiters: Array<() => void> = []
  let initError: unknown
  let sequence = 0

  const handOut = (response: ServerResponse, next: { readonly id: string; readonly event: unknown }) => {
    response.writeHead(200, {
      "content-type": "application/json",
      "lambda-runtime-aws-request-id": next.id,
      "lambda-runtime-deadline-ms": String(Date.now() + 30_000),
      "lambda-runtime-invoked-function-arn": "arn:aws:lambda:us-east-1:000000000000:function:walletgate",
      "lambda-runtime-trace-id": `Root=1-00000000-${next.id.padStart(24, "0")};Sampled=0`
    })
    response.end(JSON.stringify(next.event))
  }

  const server = createServer((request, response) => {
    const path = request.url ?? ""
    if (request.method === "GET" && path === `${API}/invocation/next`) {
      const next = queued.shift()
      if (next !== undefined) return handOut(response, next)
      parked = response
      for (const wake of waiters) wake()
      waiters = []
      return
    }
    const answered = /^\/2018-06-01\/runtime\/invocation\/([^/]+)\/(response|error)$/.exec(path)
    if (request.method === "POST" && answered !== null) {
      const [, id = "", kind] = answered
      void readBody(request).then((body) => {
        response.writeHead(202).end()
        pending.get(decodeURIComponent(id))?.({ kind: kind === "error" ? "error" : "response", body, at: Date.now() })
        pending.delete(decodeURIComponent(id))
      })
      return
    }
    if (request.method === "POST" && path === `${API}/init/error`) {
      void readBody(request).then((body) => {
        initError = body
        response.writeHead(202).end()
      })
      return
    }
    response.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo

  return {
    address: `127.0.0.1:${port}`,
    invoke: (event) =>
      new Promise<Answer>((resolve) => {
        const next = { id: `invocation-${++sequence}`, event }
        pending.set(next.id, resolve)
        const waiting = parked
        parked = undefined
        if (waiting === undefined) queued.push(next)
        else handOut(waiting, next)
      }),
    waiting: () => (parked === undefined ? new Promise<void>((resolve) => waiters.push(resolve)) : Promise.resolve()),
    initError: () => initError,
    stop: () =>
      new Promise<void>((resolve) => {
        parked?.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

const ricEntry = fileURLToPath(new URL("../node_modules/aws-lambda-ric/index.mjs", import.meta.url))
const ricHoisted = fileURLToPath(new URL("../../../node_modules/aws-lambda-ric/index.mjs", import.meta.url))

/** AWS's runtime interface client when it was built here (its native Runtime API client beside it), else none. */
const ricPath = (): string | undefined =>
  [ricEntry, ricHoisted].find(
    (entry) => existsSync(entry) && existsSync(entry.replace(/index\.mjs$/, "rapid-client.node"))
  )

/**
 * Which runtime {@link spawnRuntime} runs: AWS's `aws-lambda-ric`, or, where it could not be built (it needs
 * autoconf, automake, libtool, cmake and g++: scripts/ensure-ric.sh), a minimal loop over the same Runtime
 * API that import()s the handler.
 */
export const runtimeKind: "aws-lambda-ric" | "import() loop" =
  ricPath() === undefined ? "import() loop" : "aws-lambda-ric"

// The fallback runtime: the Runtime API protocol in a few lines, the handler import()ed as the client would.
const IMPORT_LOOP = `
const api = "http://" + process.env.AWS_LAMBDA_RUNTIME_API + "/2018-06-01/runtime"
const [file, name] = process.env._HANDLER.split(".")
let handler
try {
  handler = (await import(process.env.LAMBDA_TASK_ROOT + "/" + file + ".mjs"))[name]
} catch (error) {
  await fetch(api + "/init/error", { method: "POST", body: JSON.stringify({ errorType: error.name, errorMessage: error.message }) })
  throw error
}
for (;;) {
  const next = await fetch(api + "/invocation/next")
  const id = next.headers.get("lambda-runtime-aws-request-id")
  const event = await next.json()
  try {
    const result = await handler(event, { awsRequestId: id })
    await fetch(api + "/invocation/" + id + "/response", { method: "POST", body: JSON.stringify(result) })
  } catch (error) {
    await fetch(api + "/invocation/" + id + "/error", { method: "POST", body: JSON.stringify({ errorType: error.name, errorMessage: error.message }) })
  }
}
`

/** The function's memory in MB, as template.yaml declares it (`MemorySize`), which Lambda gives the runtime. */
export const memorySizeMb: number = Number(
  /^\s*MemorySize:\s*(\d+)\s*$/m.exec(readFileSync(new URL("../template.yaml", import.meta.url), "utf8"))?.[1] ??
    Number.NaN
)

/**
 * The flags Lambda's Node runtime starts `node` with for a function of `memoryMb` (its /var/runtime/bootstrap, unless
 * NODE_OPTIONS sets a heap size): `--expose-gc` and V8 heap limits from the memory size, a tenth of it for the young
 * generation (three semi-spaces of which make half of that, 5 %), the rest for the old generation. For 512 MB:
 * `--max-semi-space-size=8 --max-old-space-size=461`, where a Node process left to itself on a larger machine lets
 * each semi-space grow to 16 MB. bench/README.md (Method) says where these figures come from.
 */
export const lambdaNodeFlags = (memoryMb: number): ReadonlyArray<string> => {
  const newSpaceMb = Math.floor(memoryMb / 10)
  return [
    "--expose-gc",
    `--max-semi-space-size=${Math.floor(newSpaceMb / 6)}`,
    `--max-old-space-size=${memoryMb - newSpaceMb}`
  ]
}

/** Options of {@link spawnRuntime}. */
export interface RuntimeOptions {
  readonly api: RuntimeApi
  /** The folder of the handler's file (`LAMBDA_TASK_ROOT`). */
  readonly taskRoot: string
  /** `file.export`, as template.yaml's `Handler` (`_HANDLER`); default `handler.handler`. */
  readonly handler?: string
  /** The function's environment (its configuration), besides what the runtime itself is given. */
  readonly env?: Readonly<Record<string, string>>
  /** Where the runtime's stdout and stderr go; default: kept, see {@link Runtime.output}. */
  readonly stdio?: "pipe" | "ignore"
}

/** A runtime process polling a {@link RuntimeApi}. */
export interface Runtime {
  readonly child: ChildProcess
  /** What it printed so far (stdout and stderr). */
  readonly output: () => string
  /** Kills it (SIGKILL, as Lambda retires a sandbox) and waits for it to exit. */
  readonly kill: () => Promise<void>
}

/** Spawns the runtime ({@link runtimeKind}) for one function, polling `api`; it runs until killed. */
export const spawnRuntime = (options: RuntimeOptions): Runtime => {
  const ric = ricPath()
  // Node started as Lambda starts it: the heap flags of the function's memory size, then the runtime.
  const args = [
    ...lambdaNodeFlags(memorySizeMb),
    ...(ric === undefined ? ["--input-type=module", "-e", IMPORT_LOOP] : [ric])
  ]
  const child = spawn(process.execPath, args, {
    env: {
      PATH: process.env.PATH ?? "",
      AWS_LAMBDA_RUNTIME_API: options.api.address,
      LAMBDA_TASK_ROOT: options.taskRoot,
      _HANDLER: options.handler ?? "handler.handler",
      AWS_LAMBDA_FUNCTION_NAME: "walletgate",
      AWS_LAMBDA_FUNCTION_VERSION: "$LATEST",
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memorySizeMb),
      AWS_LAMBDA_LOG_GROUP_NAME: "/aws/lambda/walletgate",
      AWS_LAMBDA_LOG_STREAM_NAME: "2026/01/01/[$LATEST]loopback",
      AWS_REGION: "us-east-1",
      NODE_ENV: "production",
      ...options.env
    },
    stdio: ["ignore", options.stdio ?? "pipe", options.stdio ?? "pipe"]
  })
  let output = ""
  const keep = (chunk: Buffer) => {
    output += chunk.toString()
  }
  child.stdout?.on("data", keep)
  child.stderr?.on("data", keep)
  return {
    child,
    output: () => output,
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
      child.kill("SIGKILL")
      await exited
    }
  }
}
