// Child process of bench/http.ts: `node bench/http/serve.ts <target name> <reference JSON>` starts one server,
// prints `{"port":…}` on a line of its own, and stops when it gets SIGTERM or when its stdin closes (so that it
// never outlives the benchmark). A line `cpu` on its stdin asks for the CPU time it has used so far, answered on a
// line of its own as `{"cpu":{"user":…,"system":…}}` in µs (getrusage: all its threads, to the microsecond, where
// /proc counts in 10 ms ticks).
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
process.stdin.on("data", (chunk: Buffer) => {
  for (const line of chunk.toString().split("\n")) {
    if (line.trim() === "cpu") process.stdout.write(`${JSON.stringify({ cpu: process.cpuUsage() })}\n`)
  }
})
