// The operator console without a browser: served by the operator module only (never without an operator token), its
// headers (a strict Content Security Policy, nosniff, no referrer, revalidated), a page with no inline script or
// style and only relative URLs (so it works under a mount), a script that never parses data as markup, and the
// generated assets in step with their sources. The browser's view of it: console.browser.test.ts.
import { readFileSync } from "node:fs"
import { embeddedPorts, type Gateway, makeGateway } from "@walletgate/core"
import { describe, expect, it } from "vitest"
import { consoleAssetsSource } from "../../scripts/console-assets"

const TOKEN = "op-token-0123456789abcdef0123456789abcdef"
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const withOperator = (basePath?: string) =>
  makeGateway({
    ports: embeddedPorts(),
    loggers: [],
    operatorToken: TOKEN,
    ...(basePath === undefined ? {} : { basePath })
  })

const get = async (gateway: Gateway, path: string, headers: Record<string, string> = {}) => {
  const response = await gateway.fetch(new Request(`http://gateway.test${path}`, { headers }))
  return { status: response.status, headers: response.headers, text: await response.text() }
}

const ASSETS = [
  ["/operator", "text/html; charset=utf-8"],
  ["/operator/console.js", "text/javascript; charset=utf-8"],
  ["/operator/console.css", "text/css; charset=utf-8"]
] as const

describe("the operator console's files", () => {
  it("are served with a strict CSP, nosniff, no referrer and revalidation (a 304 when unchanged)", async () => {
    const gateway = withOperator()
    let total = 0
    for (const [path, contentType] of ASSETS) {
      const answer = await get(gateway, path)
      expect(answer.status, path).toBe(200)
      expect(answer.headers.get("content-type"), path).toBe(contentType)
      expect(answer.headers.get("content-security-policy"), path).toBe(CSP)
      expect(answer.headers.get("x-content-type-options"), path).toBe("nosniff")
      expect(answer.headers.get("referrer-policy"), path).toBe("no-referrer")
      expect(answer.headers.get("x-frame-options"), path).toBe("DENY")
      expect(answer.headers.get("cache-control"), path).toBe("no-cache")
      const etag = answer.headers.get("etag") ?? ""
      expect(etag, path).toMatch(/^"[A-Za-z0-9_-]{43}"$/)
      const again = await get(gateway, path, { "if-none-match": etag })
      expect([again.status, again.text, again.headers.get("content-security-policy")], path).toEqual([304, "", CSP])
      total += new TextEncoder().encode(answer.text).byteLength
    }
    // Small: the whole console, page, script and stylesheet, in under 30 KB.
    expect(total).toBeLessThan(30_000)
    console.info(`operator console: ${total} bytes in all`)
    await gateway.dispose()
  })

  it("are a page with no inline script, style or handler, whose URLs are all relative", async () => {
    const gateway = withOperator()
    const page = (await get(gateway, "/operator")).text
    const scripts = [...page.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)]
    expect(scripts).toHaveLength(1)
    for (const [, attributes = "", content] of scripts) {
      expect(attributes).toMatch(/\bsrc="operator\/console\.js"/)
      expect(content).toBe("")
    }
    expect(page).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=|javascript:/i)
    // Relative only: `/operator` under a mount (`/wallet/operator`) must load `/wallet/operator/console.js`.
    for (const [, url = ""] of page.matchAll(/\b(?:src|href|action)="([^"]*)"/gi)) expect(url).toMatch(/^operator\//)
    // The token's field has no name: even a form submitted without the script could not put it in a URL.
    expect(page).toMatch(/<input id="token" type="password"(?![^>]*\bname=)[^>]*>/)
    await gateway.dispose()
  })

  it("are a script that never parses a value as markup, and calls the API relative to itself", async () => {
    const gateway = withOperator()
    const script = (await get(gateway, "/operator/console.js")).text
    expect(script).not.toMatch(
      /innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|localStorage|sessionStorage|document\.cookie/
    )
    expect(script).toContain('new URL("../v1/operator/", import.meta.url)')
    await gateway.dispose()
  })

  it("work under a base path: the page's relative URLs reach its files and the operator API", async () => {
    const gateway = withOperator("/wallet")
    const pageUrl = "http://gateway.test/wallet/operator"
    expect((await get(gateway, "/wallet/operator")).status).toBe(200)
    for (const relative of ["operator/console.js", "operator/console.css"]) {
      const url = new URL(relative, pageUrl)
      expect((await get(gateway, url.pathname)).status, url.pathname).toBe(200)
    }
    // What the script does: the API relative to the script's own URL.
    const api = new URL("../v1/operator/", new URL("operator/console.js", pageUrl))
    const apps = await gateway.fetch(
      new Request(new URL("apps", api), { headers: { authorization: `Bearer ${TOKEN}` } })
    )
    expect([apps.status, new URL("apps", api).pathname]).toEqual([200, "/wallet/v1/operator/apps"])
    await gateway.dispose()
  })

  it("are not served when no operator token is configured, nor listed in its OpenAPI document", async () => {
    const gateway = makeGateway({ ports: embeddedPorts(), loggers: [] })
    for (const [path] of ASSETS) {
      const answer = await get(gateway, path)
      expect([answer.status, answer.headers.get("content-type")], path).toEqual([404, "application/problem+json"])
    }
    const document = JSON.parse((await get(gateway, "/openapi.json")).text) as { paths: Record<string, unknown> }
    expect(Object.keys(document.paths).filter((path) => path.startsWith("/operator"))).toEqual([])
    await gateway.dispose()
  })

  it("are listed in the OpenAPI document of a gateway with an operator token, with their media types", async () => {
    const gateway = withOperator()
    const document = JSON.parse((await get(gateway, "/openapi.json")).text) as {
      paths: Record<string, { get?: { responses: Record<string, { content?: Record<string, unknown> }> } }>
    }
    expect(Object.keys(document.paths).filter((path) => path.startsWith("/operator"))).toEqual([
      "/operator",
      "/operator/console.js",
      "/operator/console.css"
    ])
    expect(Object.keys(document.paths["/operator"]?.get?.responses["200"]?.content ?? {})).toEqual(["text/html"])
    expect(Object.keys(document.paths["/operator/console.js"]?.get?.responses["200"]?.content ?? {})).toEqual([
      "text/javascript"
    ])
    await gateway.dispose()
  })

  it("are generated from their sources: the committed assets are what the build makes", () => {
    const committed = readFileSync(new URL("../../src/operator/console/assets.generated.ts", import.meta.url), "utf8")
    expect(committed).toBe(consoleAssetsSource())
  })
})
