// The one adapter suite: an adapter says how it mounts a gateway, the suite says what every mounting must answer.
// It is runner-neutral (each check returns its differences), so a test file wraps each check in its runner's `it`.
import { once } from "node:events"
import { createServer, type RequestListener } from "node:http"
import type { Gateway } from "../../http/contract"
import { allConformanceCases, declaredLengthCases } from "./cases"
import { runConformance } from "./check"
import { makeConformanceGateway } from "./gateway"
import { refusedBodyThenNext, sendOverHttp, sendOverSocket } from "./transport"
import type { ConformanceCase, ConformanceRequest, ConformanceResponse } from "./types"

/** A gateway served through an adapter, as the suite drives it. */
export interface ConformanceTarget {
  /** Sends one request of the table through the adapter; its path is below the mounting. */
  readonly send: (request: ConformanceRequest) => Promise<ConformanceResponse>
  /** Where a real server answers, mount included (`http://127.0.0.1:<port>/wallet`); absent without a socket. */
  readonly url?: string
  /** Stops serving (the suite disposes of the gateway itself). */
  readonly close: () => Promise<void>
}

/** One way an adapter mounts a gateway. */
export interface ConformanceMount {
  /** Says how it is mounted (`"under /wallet"`); the checks' names end with it. */
  readonly name: string
  /** The gateway's own `basePath`, when this mounting uses one. */
  readonly basePath?: string
  /**
   * Parts of the names of cases this mounting answers otherwise by design (a host body parser that refuses a body
   * first, an event kind that cannot carry two `Set-Cookie` fields). A mounting with any is behind the host's own body
   * handling, so the socket checks (which are about body handling) skip it.
   */
  readonly hostOwned?: ReadonlyArray<string>
  /** Served on a real socket (its target has a `url`): the socket checks run on it too. */
  readonly onSocket?: boolean
  /** Serves `gateway` through the adapter. */
  readonly serve: (gateway: Gateway) => Promise<ConformanceTarget>
}

/** One check of the suite: run it, and it conforms when the differences are none. */
export interface ConformanceCheck {
  readonly name: string
  /** Serves a fresh conformance gateway, checks, stops; returns every difference, each led by its case's name. */
  readonly run: () => Promise<ReadonlyArray<string>>
}

/** Serves a Node request listener (an Express app, a Koa app's `callback()`) on 127.0.0.1 and a free port. */
export const serveListener = async (
  listener: RequestListener,
  under = ""
): Promise<ConformanceTarget & { readonly url: string }> => {
  const server = createServer(listener).listen(0, "127.0.0.1")
  await once(server, "listening")
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("expected a TCP address")
  const url = `http://127.0.0.1:${address.port}${under}`
  return {
    url,
    send: sendOverHttp(url),
    close: async () => {
      server.closeAllConnections()
      server.close()
      await once(server, "close")
    }
  }
}

/** Options of {@link httpMount}. */
export interface HttpMountOptions {
  /** The path the host mounts the adapter under, or the gateway's `basePath`: the table's paths go below it. */
  readonly under?: string
  /** The gateway's own `basePath` ({@link ConformanceMount.basePath}). */
  readonly basePath?: string
  /** {@link ConformanceMount.hostOwned}. */
  readonly hostOwned?: ReadonlyArray<string>
}

/** A mounting served by a Node request listener on a real socket: the table, then the socket checks. */
export const httpMount = (
  name: string,
  listenerOf: (gateway: Gateway) => RequestListener,
  options: HttpMountOptions = {}
): ConformanceMount => ({
  name,
  onSocket: true,
  ...(options.basePath === undefined ? {} : { basePath: options.basePath }),
  ...(options.hostOwned === undefined ? {} : { hostOwned: options.hostOwned }),
  serve: (gateway) => serveListener(listenerOf(gateway), options.under ?? options.basePath ?? "")
})

/** Serves a fresh conformance gateway through `mount`, runs `check` on it, and stops both. */
const served = async (
  mount: ConformanceMount,
  check: (target: ConformanceTarget) => Promise<ReadonlyArray<string>>
): Promise<ReadonlyArray<string>> => {
  const gateway = makeConformanceGateway(mount.basePath === undefined ? {} : { basePath: mount.basePath })
  try {
    const target = await mount.serve(gateway)
    try {
      return await check(target)
    } finally {
      await target.close()
    }
  } finally {
    await gateway.dispose()
  }
}

/** Every difference of `cases` through `send`, led by the case's name, except those of host-owned cases. */
const differences = async (
  send: ConformanceTarget["send"],
  cases: ReadonlyArray<ConformanceCase>,
  hostOwned: ReadonlyArray<string> = []
): Promise<ReadonlyArray<string>> => {
  const results = await runConformance(send, cases)
  const answered = Object.keys(results).length
  return [
    ...(answered === cases.length ? [] : [`${answered} cases answered, expected ${cases.length}`]),
    ...Object.entries(results)
      .filter(([name]) => !hostOwned.some((part) => name.includes(part)))
      .flatMap(([name, problems]) => problems.map((problem) => `${name}: ${problem}`))
  ]
}

const JWKS = "/functions/v1/.well-known/jwks.json"

/** The socket checks of one mounting served on a real socket. */
const socketChecks = (mount: ConformanceMount, first: boolean): ReadonlyArray<ConformanceCheck> => [
  {
    name: `refuses a body declared larger than the limit at once with 413 and closes the connection, ${mount.name}`,
    run: () =>
      served(mount, async ({ url = "" }) => {
        // Only 2 of the declared bytes are sent: the answer comes only if nothing waits for the rest.
        const found = await differences(sendOverSocket(url), declaredLengthCases)
        // The next request, on a new connection, is answered as usual.
        const next = (await fetch(`${url}${JWKS}`)).status
        return next === 200 ? found : [...found, `the next request answered ${next}`]
      })
  },
  // A refused body left unread on a pooled connection would reset the next request: checked on the first mounting.
  ...(first ? (["declared", "chunked"] as const) : []).map((framing) => ({
    name: `answers a refused body of 2 MB (${framing} length) with 413, then the next request on its connection with 200, ${mount.name}`,
    run: () =>
      served(mount, async ({ url = "" }) => {
        const outcome = await refusedBodyThenNext(url, {
          path: "/functions/v1/signInWithOTP",
          nextPath: JWKS,
          bytes: 2 * 1024 * 1024,
          framing
        })
        const wanted = { refused: { status: 413, connection: "close" }, next: 200 }
        return JSON.stringify(outcome) === JSON.stringify(wanted) ? [] : [`got ${JSON.stringify(outcome)}`]
      })
  }))
]

/**
 * The checks every mounting of an adapter must pass: the whole table through each mounting, and, through each
 * mounting served on a real socket ({@link httpMount}) without host-owned cases, the body-handling checks only a
 * socket can ask (a declared length that never arrives, a refused body on a pooled connection).
 */
export const conformanceChecks = (mounts: ReadonlyArray<ConformanceMount>): ReadonlyArray<ConformanceCheck> => {
  const onSocket = mounts.filter((mount) => mount.onSocket === true && (mount.hostOwned ?? []).length === 0)
  return [
    ...mounts.map((mount) => ({
      name: `passes every case ${mount.name}`,
      run: () => served(mount, (target) => differences(target.send, allConformanceCases, mount.hostOwned))
    })),
    ...onSocket.flatMap((mount, index) => socketChecks(mount, index === 0))
  ]
}
