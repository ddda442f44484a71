// Invokes the bundled handler once, in this fresh process, with an event file, as Lambda would:
// `npm run invoke -w @walletgate/example-lambda -- events/sign-in.json` (the file relative to examples/lambda), with the
// function's settings in the environment (REDIS_URL, WALLETGATE_MASTER_SECRET, WALLETGATE_SIGNING_KEY: see the README).
// The result is printed last, as one JSON line.
import { readFile } from "node:fs/promises"
import type { LambdaHttpHandler } from "@walletgate/lambda"

const [eventFile] = process.argv.slice(2)
if (eventFile === undefined) throw new Error("usage: node scripts/invoke.ts <event.json>")
const bundle = new URL("../build/handler.mjs", import.meta.url)
const { handler } = (await import(bundle.href)) as { readonly handler: LambdaHttpHandler }
console.log(JSON.stringify(await handler(JSON.parse(await readFile(eventFile, "utf8")))))
