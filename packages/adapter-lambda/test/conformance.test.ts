import {
  allConformanceCases,
  CONFORMANCE_COOKIES,
  conformanceCases,
  makeConformanceGateway,
  runConformance
} from "@walletgate/core/testing"
import { createHandler, type LambdaHttpHandler } from "@walletgate/lambda"
import { describe, expect, it } from "vitest"
import { type EventKind, eventKinds, sendAsLambda } from "./events"

/**
 * The cases an event kind cannot carry: a target group without multi-value headers reads one value per name, so
 * an ALB answer there holds one `Set-Cookie` (see the adapter's README).
 */
const cannotCarry = (kind: EventKind): ReadonlyArray<string> =>
  kind === "ALB"
    ? ["two Set-Cookie fields arrive whole and apart", "HEAD of a route that sets two cookies sets them too"]
    : []

/** Runs the table through `wrap(createHandler(gateway))`, every request an event of `kind`, below `base`. */
const run = async (
  kind: EventKind,
  wrap: (handler: LambdaHttpHandler) => LambdaHttpHandler = (handler) => handler,
  base = ""
) => {
  const gateway = makeConformanceGateway(base === "" ? {} : { basePath: base })
  try {
    const results = await runConformance(sendAsLambda(kind, wrap(createHandler(gateway)), base))
    expect(Object.keys(results)).toHaveLength(allConformanceCases.length)
    return results
  } finally {
    await gateway.dispose()
  }
}

describe("conformance: Lambda", () => {
  for (const kind of eventKinds) {
    for (const base of ["", "/wallet"]) {
      it(`passes every case fed ${kind} events, ${base === "" ? "unmounted" : `mounted under ${base}`}`, async () => {
        const results = await run(kind, undefined, base)
        const failing = Object.entries(results).filter(([, problems]) => problems.length > 0)
        expect(failing.filter(([name]) => !cannotCarry(kind).includes(name))).toEqual([])
      })
    }
  }

  it("a target group without multi-value headers carries the first Set-Cookie only", async () => {
    const results = await run("ALB")
    expect(results["two Set-Cookie fields arrive whole and apart"]).toEqual([
      `set-cookie ${JSON.stringify([CONFORMANCE_COOKIES[0]])}, expected ${JSON.stringify(CONFORMANCE_COOKIES)}`
    ])
  })

  it("a deliberate difference fails the table", async () => {
    // An adapter that answers a multi-value ALB event with single-value headers, which ALB then drops.
    const results = await run("ALB with multi-value headers", (handler) => async (event, context) => {
      const { multiValueHeaders, ...result } = await handler(event, context)
      const headers = Object.fromEntries(
        Object.entries(multiValueHeaders ?? {}).map(([name, [value = ""]]) => [name, value])
      )
      return { ...result, headers }
    })
    for (const problems of Object.values(results)) expect(problems).toContain("no x-request-id")
  })
})

describe("a body over the limit, through Lambda", () => {
  // API Gateway and ALB frame the body themselves and hand it over whole: no length can be declared that the body does
  // not have, and there is no connection of the function's own to close after the 413.
  const overLimit = conformanceCases.find((testCase) => testCase.name === "a body over the limit is 413")
  for (const kind of eventKinds) {
    it(`is 413 without a connection field, fed ${kind} events`, async () => {
      if (overLimit === undefined || typeof overLimit.request === "function") throw new Error("the table lost its row")
      const gateway = makeConformanceGateway()
      try {
        const response = await sendAsLambda(kind, createHandler(gateway))(overLimit.request)
        expect(response.status).toBe(413)
        expect(response.headers.connection).toBeUndefined()
      } finally {
        await gateway.dispose()
      }
    })
  }
})
