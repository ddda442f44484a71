// The operator console in a real browser: Debian's Chromium, headless, driven over the DevTools protocol by
// playwright-core (scripts/ensure-tools.sh installs it), against a gateway on anvil + alto served over HTTP under
// a mount (`/wallet`). It signs in from the URL fragment (which leaves the address bar, and no request carries the
// token in a URL or a header other than Authorization), finds the kernel transaction the test made, shows a hostile
// app name as text, creates an app (its secret shown once, then gone), revokes an API key (which the gateway then
// refuses), and saves a screenshot under test-artifacts/.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type BrowserContext, chromium } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshAddress, startKernelFixture } from "../kernel/fixture"
import { serveOverHttp } from "../serveHttp"

const TOKEN = "op-console-token-0123456789abcdef0123456789"
const HOSTILE = "<img src=x onerror=alert(1)>"
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
const ARTIFACTS = fileURLToPath(new URL("../../../../test-artifacts/", import.meta.url))

type Fixture = Awaited<ReturnType<typeof startKernelFixture>>

describe("the operator console in Chromium (anvil + alto)", { tags: ["devnet"] }, () => {
  let f: Fixture
  let base: string
  let closeServer: () => Promise<void>
  let browser: BrowserContext
  let profile: string
  const operator = { authorization: `Bearer ${TOKEN}` }

  beforeAll(async () => {
    f = await startKernelFixture({ operatorToken: TOKEN, automation: () => [{ accountKey: "console" }] })
    const served = await serveOverHttp(f.gateway, "/wallet")
    base = served.base
    closeServer = served.close
    profile = mkdtempSync(join(tmpdir(), "walletgate-chromium-"))
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: "/usr/bin/chromium",
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync"
      ]
    })
  }, 120_000)
  afterAll(async () => {
    await browser?.close()
    if (profile !== undefined) rmSync(profile, { recursive: true, force: true })
    await closeServer?.()
    await f?.stop()
  })

  it("signs in from the fragment, shows the kernel tx confirmed and a hostile name as text, revokes a key", {
    timeout: 120_000
  }, async () => {
    // A kernel transaction, confirmed on the chain.
    const bearer = { authorization: `Bearer ${await f.accessToken()}` }
    const user = await f.phoneUser()
    const sent = await f.call(
      "POST",
      "/v1/kernel/tx",
      { userId: user.userId, chain: "anvil", to: [freshAddress()], value: ["0"], data: ["0x"], auth: user.jwt },
      bearer
    )
    expect(sent.status).toBe(200)
    const final = await f.settled(sent.body.id, bearer)
    expect(final).toMatchObject({ userOpHash: sent.body.userOpHash, status: "confirmed" })
    const userOpHash = String(final.userOpHash)

    // A hostile app name and an API key, through the operator API.
    const hostile = await f.call("POST", "/v1/operator/apps", { name: HOSTILE, providers: ["phone"] }, operator)
    expect(hostile.status).toBe(201)
    const account = f.automationAccounts[0]?.address ?? ""
    const created = await f.call("POST", "/v1/operator/keys", { networks: ["anvil"], accounts: [account] }, operator)
    expect(created.status).toBe(201)
    const keyId = String(created.body.id)
    const payout = async () =>
      (
        await f.call(
          "POST",
          `/v1/anvil/account/${account}/payout/disperse`,
          {},
          { "x-api-key": String(created.body.key) }
        )
      ).status
    // Accepted before the console revokes it (the account has no payout plan: refused for that, never 401).
    expect(await payout()).not.toBe(401)

    const page = await browser.newPage()
    const requests: Array<{ url: string; headers: Record<string, string> }> = []
    page.on("request", (request) => requests.push({ url: request.url(), headers: request.headers() }))
    const dialogs: Array<{ type: string; message: string }> = []
    page.on("dialog", (dialog) => {
      dialogs.push({ type: dialog.type(), message: dialog.message() })
      void (dialog.type() === "confirm" ? dialog.accept() : dialog.dismiss())
    })
    const problems: Array<string> = []
    // Failed loads are told by their responses: the only one allowed is the browser's own /favicon.ico, at the
    // origin's root, outside the mount.
    page.on("console", (message) => {
      if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
        problems.push(message.text())
      }
    })
    page.on("response", (answer) => {
      if (answer.status() >= 400 && new URL(answer.url()).pathname !== "/favicon.ico") {
        problems.push(`${answer.status()} ${answer.url()}`)
      }
    })
    page.on("pageerror", (error) => problems.push(error.message))

    const response = await page.goto(`${base}/wallet/operator#token=${TOKEN}`)
    expect(response?.status()).toBe(200)
    expect(response?.headers()["content-security-policy"]).toBe(CSP)
    expect(response?.headers()["x-content-type-options"]).toBe("nosniff")
    expect(response?.headers()["referrer-policy"]).toBe("no-referrer")
    await page.locator("#console").waitFor({ state: "visible" })
    expect(await page.locator("#sign-in").isHidden()).toBe(true)
    // The fragment left the address bar (and the history entry) as soon as it was read.
    expect(page.url()).toBe(`${base}/wallet/operator`)
    expect(await page.evaluate(() => location.hash)).toBe("")

    // The kernel transaction, with its userOpHash, confirmed.
    const operation = page.locator("#operations tbody tr", { hasText: userOpHash })
    await operation.waitFor()
    expect(await operation.locator("td.status").textContent()).toBe("confirmed")

    // The hostile name is text: no element made of it, no dialog opened by it.
    await expect.poll(() => page.locator("#apps td", { hasText: HOSTILE }).count()).toBe(1)
    expect(await page.locator("#apps td", { hasText: HOSTILE }).textContent()).toBe(HOSTILE)
    expect(await page.locator("img").count()).toBe(0)

    // The networks, the automation account with its balance, the audit log.
    expect(await page.locator("#networks tbody tr", { hasText: "anvil" }).count()).toBeGreaterThan(0)
    expect(await page.locator("#accounts tbody tr", { hasText: account }).textContent()).toContain("ETH")
    expect(await page.locator("#audit tbody tr", { hasText: "key.create" }).count()).toBe(1)

    // An app created in the console: its secret shown once, in a box that forgets it when dismissed.
    await page.locator("#app-name").fill("Console shop")
    await page.locator("#create-app button[type=submit]").click()
    await page.locator("#secret").waitFor({ state: "visible" })
    expect(await page.locator("#secret-value").textContent()).toMatch(/^wgs_/)
    await page.locator("#apps tbody tr", { hasText: "Console shop" }).waitFor()
    await page.locator("#secret-dismiss").click()
    expect([await page.locator("#secret").isHidden(), await page.locator("#secret-value").textContent()]).toEqual([
      true,
      ""
    ])

    // The key revoked in the console; the gateway refuses it from then on.
    const keyRow = page.locator("#keys tbody tr", { hasText: keyId })
    await keyRow.getByRole("button", { name: "Revoke" }).click()
    await keyRow.getByRole("button", { name: "Revoke" }).waitFor({ state: "detached" })
    expect(await payout()).toBe(401)
    expect(dialogs).toEqual([{ type: "confirm", message: expect.stringContaining(keyId) }])

    // No inline script, nothing the CSP refused, nothing failed.
    const scripts = await page.$$eval("script", (found) => found.map((script) => [script.src, script.text]))
    expect(scripts).toEqual([[`${base}/wallet/operator/console.js`, ""]])
    expect(problems).toEqual([])
    // The token never in a URL, nor in any header but Authorization, nor kept in storage or a cookie.
    expect(requests.length).toBeGreaterThan(5)
    for (const request of requests) {
      expect(request.url).not.toContain(TOKEN)
      const { authorization: _, ...others } = request.headers
      expect(JSON.stringify(others)).not.toContain(TOKEN)
    }
    expect(requests.filter((request) => request.headers.authorization === `Bearer ${TOKEN}`).length).toBeGreaterThan(0)
    expect(await page.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie])).toEqual([0, 0, ""])
    expect(await browser.cookies()).toEqual([])

    mkdirSync(ARTIFACTS, { recursive: true })
    const screenshot = join(ARTIFACTS, "operator-console.png")
    await page.screenshot({ path: screenshot, fullPage: true })
    console.info(`operator console screenshot: ${screenshot}`)
    await page.close()
  })
})
