// The gateway every adapter is run against: embedded defaults, test phones, one app, one API key, a cookie route.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { hashClientSecret } from "../../auth/AppAuth"
import { composeGateway } from "../../compose"
import type { Gateway } from "../../http/contract"
import { defineModule } from "../../http/module"
import { routeWithoutBody } from "../../http/route"
import { SmsSender } from "../../otp/SmsSender"
import { hashApiKey } from "../../payout/ApiKeys"
import { embeddedPorts, standardModules } from "../../walletgate"

/** The body limit of {@link makeConformanceGateway}: small, so the 413 case stays small. */
export const CONFORMANCE_BODY_LIMIT = 2048

/** Test phones of the conformance gateway: one per case that needs state, so cases never interfere. */
export const testPhone = (n: number) => `+1500555${String(n).padStart(4, "0")}`
/** The code every test phone of the conformance gateway accepts. */
export const TEST_CODE = "246810"

/** The API key registered in {@link makeConformanceGateway} (a test key; the gateway serves no network). */
export const CONFORMANCE_API_KEY = "wg_test_conformance_key_00000000000000000000000000000000"
/** The account the API key {@link CONFORMANCE_API_KEY} may pay out from. */
export const CONFORMANCE_ACCOUNT = "0x000000000000000000000000000000000000dEaD"

/** The app registered in {@link makeConformanceGateway}. */
export const CONFORMANCE_CLIENT = { clientId: "wgc_conformance", clientSecret: "wgs_conformance" } as const

/** The path of the conformance gateway's test route that sets two cookies. */
export const COOKIES_PATH = "/test/cookies"

/** The cookies that route sets: an `Expires` holds a comma, so joining or splitting them on commas breaks them. */
export const CONFORMANCE_COOKIES = [
  "session=abc; Expires=Wed, 21 Oct 2026 07:28:00 GMT; Path=/; HttpOnly; Secure",
  "theme=dark; Path=/"
] as const

/** A test module: `GET /test/cookies` answers 200 with two `Set-Cookie` fields. No production module sets one yet. */
const cookieModule = defineModule({
  name: "conformance-cookies",
  layer: Layer.empty,
  problems: {},
  routes: [
    routeWithoutBody("GET", COOKIES_PATH, () =>
      Effect.succeed({ status: 200, body: { cookies: 2 }, headers: { "set-cookie": CONFORMANCE_COOKIES } })
    )
  ]
})

/** Options of {@link makeConformanceGateway}. */
export interface ConformanceGatewayOptions {
  /** The gateway's own mount prefix (`"/wallet"`); the table's paths are below it. */
  readonly basePath?: string
}

/**
 * A gateway on the embedded defaults with the settings the table assumes: test phones
 * `+15005550001`… with code `246810`, a body limit of {@link CONFORMANCE_BODY_LIMIT}, and a test route that
 * sets two cookies ({@link COOKIES_PATH}).
 */
export const makeConformanceGateway = (options: ConformanceGatewayOptions = {}): Gateway =>
  composeGateway({
    modules: [...standardModules(), cookieModule],
    ...(options.basePath === undefined ? {} : { basePath: options.basePath }),
    ports: Layer.mergeAll(
      embeddedPorts({
        otp: { testPhones: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [testPhone(i + 1), TEST_CODE])) },
        apps: [
          {
            clientId: CONFORMANCE_CLIENT.clientId,
            secretHash: hashClientSecret(CONFORMANCE_CLIENT.clientSecret),
            providers: ["phone"],
            testMode: true
          }
        ],
        masterSecret: "conformance-master-secret-not-for-production",
        apiKeys: [
          {
            id: CONFORMANCE_API_KEY.slice(8, 20),
            mode: "test",
            hash: hashApiKey(CONFORMANCE_API_KEY),
            networks: ["anvil"],
            accounts: [CONFORMANCE_ACCOUNT.toLowerCase()],
            createdAt: 0
          }
        ]
      }),
      SmsSender.console(() => undefined)
    ),
    bodyLimit: CONFORMANCE_BODY_LIMIT,
    loggers: []
  })
