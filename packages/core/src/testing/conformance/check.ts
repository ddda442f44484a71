// Compares answers with the table: one response with one row, and a whole table through one target.
import { allConformanceCases } from "./cases"
import type { ConformanceCase, ConformanceRequest, ConformanceResponse } from "./types"

const canonical = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonical)
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, inner]) => [key, canonical(inner)])
    )
  }
  return value
}

/** Compares a response with a case's expectation; returns every difference (empty when it conforms). */
export const checkConformance = (testCase: ConformanceCase, response: ConformanceResponse): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const { expect } = testCase
  if (response.status !== expect.status) problems.push(`status ${response.status}, expected ${expect.status}`)
  const media = (response.headers["content-type"] ?? "").split(";")[0]?.trim()
  if (media !== expect.contentType) problems.push(`content-type ${media}, expected ${expect.contentType}`)
  if (response.headers["x-request-id"] === undefined) problems.push("no x-request-id")
  if (response.headers["x-content-type-options"] !== "nosniff") problems.push("no x-content-type-options: nosniff")
  for (const [name, wanted] of Object.entries(expect.headers ?? {})) {
    const actual = response.headers[name]
    const ok = typeof wanted === "string" ? actual === wanted : actual !== undefined && wanted.test(actual)
    if (!ok) problems.push(`header ${name}: ${actual}, expected ${String(wanted)}`)
  }
  const cookies = expect.setCookie ?? []
  if (JSON.stringify(response.setCookie) !== JSON.stringify(cookies)) {
    problems.push(`set-cookie ${JSON.stringify(response.setCookie)}, expected ${JSON.stringify(cookies)}`)
  }
  if (expect.contentType === "" || expect.bodyless === true) {
    if (response.body !== "") problems.push(`body ${response.body}, expected none`)
    return problems
  }
  let body: unknown
  try {
    body = JSON.parse(response.body)
  } catch {
    problems.push("body is not JSON")
    return problems
  }
  if (expect.body !== undefined && JSON.stringify(canonical(body)) !== JSON.stringify(canonical(expect.body))) {
    problems.push(`body ${response.body}, expected ${JSON.stringify(expect.body)}`)
  }
  if (expect.check !== undefined) problems.push(...expect.check(body).map((p) => `body: ${p}`))
  return problems
}

/**
 * Runs the whole table (or `cases`) through `send` (one target: an adapter on a real server, a Lambda handler, …)
 * and returns the differences per case name. A target conforms when every list is empty.
 */
export const runConformance = async (
  send: (request: ConformanceRequest) => Promise<ConformanceResponse>,
  cases: ReadonlyArray<ConformanceCase> = allConformanceCases
): Promise<Record<string, ReadonlyArray<string>>> => {
  const results: Record<string, ReadonlyArray<string>> = {}
  for (const testCase of cases) {
    const setup: Array<string> = []
    const answers: Array<ConformanceResponse> = []
    for (const request of testCase.before ?? []) {
      const response = await send(request)
      answers.push(response)
      if (response.status < 200 || response.status > 299)
        setup.push(`setup ${request.path} answered ${response.status}`)
    }
    const request = typeof testCase.request === "function" ? testCase.request(answers) : testCase.request
    results[testCase.name] = [...setup, ...checkConformance(testCase, await send(request))]
  }
  return results
}
