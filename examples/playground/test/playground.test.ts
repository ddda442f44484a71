import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"

const main = fileURLToPath(new URL("../src/main.ts", import.meta.url))
const children: Array<ChildProcess> = []
afterAll(() => {
  for (const child of children) child.kill("SIGKILL")
})

/** Starts the playground as `npm start` does (after the build), with `env` on top of a clean environment. */
const start = (env: Record<string, string>) => {
  const child = spawn(process.execPath, [main], {
    env: { PATH: process.env.PATH ?? "", PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.push(child)
  let output = ""
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString()
  })
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString()
  })
  const waitFor = async (pattern: RegExp, ms = 15_000) => {
    const until = Date.now() + ms
    while (Date.now() < until) {
      const match = output.match(pattern)
      if (match !== null) return match
      if (child.exitCode !== null) break
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    throw new Error(`no ${pattern} in:\n${output}`)
  }
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  return { child, waitFor, exited, output: () => output }
}

describe("the playground (npm start)", () => {
  it("serves phone sign-in on the embedded defaults, with the code in the console outbox", async () => {
    const playground = start({})
    const [, base] = (await playground.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/)) as RegExpMatchArray
    const post = (path: string, body: unknown) =>
      fetch(`${base}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body)
      })
    expect((await post("/functions/v1/signInWithOTP", { phone: "+14155552671" })).status).toBe(200)
    const [, code] = (await playground.waitFor(
      /\[walletgate sms outbox\] to \*\*\*2671: .*?(\d{6})/
    )) as RegExpMatchArray
    const verified = await post("/functions/v1/verifyOTP", { phone: "+14155552671", token: code })
    expect(verified.status).toBe(200)
    expect(await verified.json()).toMatchObject({ token_type: "bearer", user: { phone: "+14155552671" } })
    playground.child.kill("SIGTERM")
    expect(await playground.exited).toBe(0)
  })

  it.each([
    [{ WALLETGATE_SMS: "carrier-pigeon" }, "WALLETGATE_SMS"],
    [{ WALLETGATE_SMS: "twilio" }, "TWILIO_ACCOUNT_SID"],
    [{ WALLETGATE_SMS: "twilio", TWILIO_ACCOUNT_SID: "AC1", TWILIO_AUTH_TOKEN: "t" }, "TWILIO_FROM"],
    [{ WALLETGATE_SMS: "webhook", WALLETGATE_SMS_WEBHOOK_URL: "not a url" }, "WALLETGATE_SMS_WEBHOOK_URL"],
    [{ PORT: "70000" }, "PORT"]
  ])("stops at start on invalid configuration %o, naming %s", async (env, variable) => {
    const playground = start(env)
    expect(await playground.exited).toBe(1)
    expect(playground.output()).toContain("invalid configuration")
    expect(playground.output()).toContain(variable)
  })
})
