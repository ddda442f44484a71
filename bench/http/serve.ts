// Child process of bench/http.ts: `node bench/http/serve.ts <target name> <reference JSON>` starts one server,
// prints `{"port":…}` on a line of its own, and stops when it gets SIGTERM or when its stdin closes (so that it
// never outlives the benchmark).
import type { Reference } from "./requests.ts"
import { startTarget, type TargetName, targetNames } from "./targets.ts"

const [name, reference] = process.argv.slice(2)
const target = targetNames.find((candidate) => candidate === name)
if (target === undefined || reference === undefined) {
  throw new Error(`usage: serve.ts <${targetNames.join(" | ")}> <reference JSON>`)
}

const running = await startTarget(target satisfies TargetName, JSON.parse(reference) as Reference)
process.stdout.write(`${JSON.stringify({ port: running.port })}\n`)

let stopping = false
const stop = () => {
  if (stopping) return
  stopping = true
  running.close().then(
    () => process.exit(0),
    () => process.exit(1)
  )
}
process.once("SIGTERM", stop)
process.stdin.once("end", stop)
process.stdin.once("close", stop)
process.stdin.resume()
