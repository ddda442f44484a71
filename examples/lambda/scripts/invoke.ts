// Invokes the bundled handler once, in this fresh process, with an event file, as Lambda would:
// `npm run invoke -w @walletgate/example-lambda -- events/sign-in.json` (the file relative to examples/lambda), with the
// function's settings in the environment (REDIS_URL, WALLETGATE_MASTER_SECRET, WALLETGATE_SIGNING_KEY: see the README).
// The result is printed last, as one JSON line, and the process exits at once: like Lambda, which freezes the sandbox
// when the handler returns, it does not wait for the open Redis connection (it would keep Node running for ever).
import { readFile } from "node:fs/promises"
import type { LambdaHttpHandler } from "@walletgate/lambda"

const [eventFile] = process.argv.slice(2)
if (eventFile === undefined) throw new Error("usage: node scripts/invoke.ts <event.json>")
const bundle = new URL("../build/handler.mjs", import.meta.url)
const { handler } = (await import(bundle.href)) as { readonly handler: LambdaHttpHandler }
const result = await handler(JSON.parse(await readFile(eventFile, "utf8")))
process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0))
