// What an event kind can and cannot carry of the conformance table, and a deliberate difference the table catches.
import {
  allConformanceCases,
  CONFORMANCE_COOKIES,
  conformanceCases,
  conformanceChecks,
  makeConformanceGateway
} from "@walletgate/core/testing"
import { createHandler } from "@walletgate/lambda"
import { describe, expect, it } from "vitest"
import { eventKinds, lambdaMount, sendAsLambda } from "./events"

/** The differences of the whole table through one Lambda mounting. */
const tableThrough = async (mount: ReturnType<typeof lambdaMount>) => {
  const [table] = conformanceChecks([mount])
  if (table === undefined) throw new Error("the suite lost its table check")
  return table.run()
}

describe("what a Lambda event kind carries", () => {
  it("a target group without multi-value headers carries the first Set-Cookie only", async () => {
    const wanted = JSON.stringify(CONFORMANCE_COOKIES)
    const first = JSON.stringify([CONFORMANCE_COOKIES[0]])
    expect(await tableThrough(lambdaMount("ALB"))).toEqual([
      `two Set-Cookie fields arrive whole and apart: set-cookie ${first}, expected ${wanted}`,
      `HEAD of a route that sets two cookies sets them too: set-cookie ${first}, expected ${wanted}`
    ])
  })

  it("a deliberate difference fails the table", async () => {
    // An adapter that answers a multi-value ALB event with single-value headers, which ALB then drops.
    const differences = await tableThrough(
      lambdaMount("ALB with multi-value headers", "", {
        wrap: (handler) => async (event, context) => {
          const { multiValueHeaders, ...result } = await handler(event, context)
          const headers = Object.fromEntries(
            Object.entries(multiValueHeaders ?? {}).map(([name, [value = ""]]) => [name, value])
          )
          return { ...result, headers }
        }
      })
    )
    for (const testCase of allConformanceCases) expect(differences).toContain(`${testCase.name}: no x-request-id`)
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
