// A real Prometheus (Debian's package at /usr/bin/prometheus; scripts/ensure-tools.sh installs it) scrapes
// `GET /v1/operator/metrics` of a gateway served over HTTP on 127.0.0.1, with the operator token read from a
// credentials file: its query API then answers `walletgate_sms_sent_total`, the target is up, a second job with a
// wrong token sees it down (the gateway answers 404) and has no sample, promtool finds nothing to lint in the text,
// and neither token is in Prometheus' log.
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { embeddedPorts, type Gateway, makeGateway } from "@walletgate/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort } from "../../src/devnet/anvil"
import { type Served, serveOverHttp } from "../serveHttp"

const OPERATOR_TOKEN = "operator-token-prometheus-0123456789abcdef"
const WRONG_TOKEN = "operator-token-prometheus-0123456789abcdee"
const PROMETHEUS = "/usr/bin/prometheus"
/** Prometheus' own linter of the text format, from the same package. */
const PROMTOOL = "/usr/bin/promtool"
/** How long Prometheus gets to start, and then to scrape and answer a query. */
const DEADLINE_MS = 30_000

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Polls `probe` every 250 ms until it answers something other than undefined, or fails after {@link DEADLINE_MS}. */
const eventually = async <A>(what: string, probe: () => Promise<A | undefined>, log: () => string): Promise<A> => {
  const deadline = Date.now() + DEADLINE_MS
  while (Date.now() < deadline) {
    const found = await probe().catch(() => undefined)
    if (found !== undefined) return found
    await sleep(250)
  }
  throw new Error(`Prometheus: ${what} not within ${DEADLINE_MS} ms; its log:\n${log()}`)
}

interface Target {
  readonly labels: { readonly job: string }
  readonly health: string
  readonly lastError: string
}

describe("a real Prometheus scraping /v1/operator/metrics", () => {
  let gateway: Gateway
  let served: Served
  let dir: string
  let prometheus: ChildProcess
  let log = ""
  let api: string

  const query = async (expression: string) => {
    const response = await fetch(`${api}/api/v1/query?query=${encodeURIComponent(expression)}`)
    const body = (await response.json()) as {
      readonly status: string
      readonly data: { readonly result: ReadonlyArray<{ readonly value: readonly [number, string] }> }
    }
    expect(body.status).toBe("success")
    return body.data.result
  }
  const targets = async () => {
    const response = await fetch(`${api}/api/v1/targets`)
    return ((await response.json()) as { data: { activeTargets: ReadonlyArray<Target> } }).data.activeTargets
  }

  beforeAll(async () => {
    gateway = makeGateway({ ports: embeddedPorts(), loggers: [], operatorToken: OPERATOR_TOKEN })
    served = await serveOverHttp(gateway)
    const target = new URL(served.base).host
    dir = mkdtempSync(join(tmpdir(), "walletgate-prometheus-"))
    writeFileSync(join(dir, "token"), OPERATOR_TOKEN, { mode: 0o600 })
    writeFileSync(join(dir, "wrong-token"), WRONG_TOKEN, { mode: 0o600 })
    const job = (name: string, credentials: string) =>
      [
        `  - job_name: ${name}`,
        "    metrics_path: /v1/operator/metrics",
        "    authorization:",
        `      credentials_file: ${join(dir, credentials)}`,
        "    static_configs:",
        `      - targets: ["${target}"]`
      ].join("\n")
    writeFileSync(
      join(dir, "prometheus.yml"),
      [
        "global:",
        "  scrape_interval: 1s",
        "  scrape_timeout: 1s",
        "scrape_configs:",
        job("walletgate", "token"),
        job("walletgate-wrong-token", "wrong-token"),
        ""
      ].join("\n")
    )
    const listen = `127.0.0.1:${await freePort()}`
    api = `http://${listen}`
    prometheus = spawn(
      PROMETHEUS,
      [
        `--config.file=${join(dir, "prometheus.yml")}`,
        `--storage.tsdb.path=${join(dir, "data")}`,
        `--web.listen-address=${listen}`
      ],
      { stdio: ["ignore", "pipe", "pipe"] }
    )
    prometheus.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      log += chunk
    })
    prometheus.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      log += chunk
    })
    await eventually(
      "ready",
      async () => {
        if (prometheus.exitCode !== null) throw new Error(`Prometheus exited with ${prometheus.exitCode}:\n${log}`)
        return (await fetch(`${api}/-/ready`)).ok ? true : undefined
      },
      () => log
    )
  }, 60_000)
  afterAll(async () => {
    if (prometheus !== undefined && prometheus.exitCode === null && prometheus.signalCode === null) {
      const exited = new Promise<void>((resolve) => prometheus.once("exit", () => resolve()))
      prometheus.kill("SIGTERM")
      const lingering = setTimeout(() => prometheus.kill("SIGKILL"), 5_000)
      await exited
      clearTimeout(lingering)
    }
    await served?.close()
    await gateway?.dispose()
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  })

  it("scrapes walletgate_sms_sent_total with the operator token, and a wrong token sees the target down", {
    timeout: 60_000
  }, async () => {
    // A sign-in sends one SMS (the console sender), so the counter has a sample.
    const signIn = await fetch(`${served.base}/functions/v1/signInWithOTP`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ phone: "+12125551234" })
    })
    expect(signIn.status).toBe(200)

    const sent = await eventually(
      "walletgate_sms_sent_total ≥ 1",
      async () => {
        const result = await query('walletgate_sms_sent_total{job="walletgate",outcome="sent",provider="console"}')
        return result.find((sample) => Number(sample.value[1]) >= 1)
      },
      () => log
    )
    expect(Number(sent.value[1])).toBe(1)

    const [good, wrong] = await eventually(
      "both targets scraped",
      async () => {
        const active = await targets()
        const good = active.find((target) => target.labels.job === "walletgate")
        const wrong = active.find((target) => target.labels.job === "walletgate-wrong-token")
        return good?.health === "up" && wrong?.health === "down" ? ([good, wrong] as const) : undefined
      },
      () => log
    )
    expect(good.lastError).toBe("")
    expect(wrong.lastError).toContain("404")
    expect(await query('up{job="walletgate-wrong-token"}')).toEqual([
      expect.objectContaining({ value: [expect.anything(), "0"] })
    ])
    expect(await query('walletgate_sms_sent_total{job="walletgate-wrong-token"}')).toEqual([])
    // The histogram of request durations came through as well, by route.
    expect(
      (
        await query(
          'http_server_request_duration_seconds_count{job="walletgate",http_route="/functions/v1/signInWithOTP"}'
        )
      ).length
    ).toBeGreaterThan(0)

    // What the scrape read, linted by promtool (format and naming conventions): it finds nothing to say.
    const text = await (
      await fetch(`${served.base}/v1/operator/metrics`, {
        headers: { authorization: `Bearer ${OPERATOR_TOKEN}` }
      })
    ).text()
    expect(text).toContain('walletgate_sms_sent_total{outcome="sent",provider="console"} 1')
    const lint = spawnSync(PROMTOOL, ["check", "metrics"], { input: text, encoding: "utf8" })
    expect({ status: lint.status, output: `${lint.stdout}${lint.stderr}` }).toEqual({ status: 0, output: "" })

    expect(log).toContain("Server is ready to receive web requests")
    expect(log).not.toContain(OPERATOR_TOKEN)
    expect(log).not.toContain(WRONG_TOKEN)
  })
})
