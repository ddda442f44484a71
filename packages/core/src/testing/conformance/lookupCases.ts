// Rows of the dust-sweeping lookups (`/api/*`) on a gateway without sweeper settings: addresses, CORS, methods.
import { CONFORMANCE_ACCOUNT } from "./gateway"
import { PROBLEM, post, problem } from "./requests"
import type { ConformanceCase } from "./types"

const SOME_ADDRESS = "0x52908400098527886E0F7030069857D2E4169EE7"
const INVALID_ADDRESS =
  "Give exactly one Ethereum address: 0x and 40 hex digits (mixed case must carry its EIP-55 checksum)."
const NOT_CONFIGURED_TITLE = "Dust-sweeping lookups not configured"
const NOT_CONFIGURED = "This gateway does not serve dust-sweeping lookups."

/** Rows of the lookups: address checks, the not-configured answer, CORS and methods. */
export const lookupCases: ReadonlyArray<ConformanceCase> = [
  {
    name: "a lookup of something that is not an address is 400 invalid_address, readable cross-origin",
    request: { method: "GET", path: "/api/0x123", headers: { origin: "https://app.example" } },
    expect: {
      status: 400,
      contentType: PROBLEM,
      headers: { "access-control-allow-origin": "*", "cache-control": "no-store" },
      body: problem(400, "invalid_address", "Invalid address", INVALID_ADDRESS)
    }
  },
  {
    name: "a lookup of two addresses is 400 invalid_address",
    request: { method: "GET", path: `/api/${SOME_ADDRESS},${CONFORMANCE_ACCOUNT}` },
    expect: {
      status: 400,
      contentType: PROBLEM,
      body: problem(400, "invalid_address", "Invalid address", INVALID_ADDRESS)
    }
  },
  {
    name: "a lookup of a mixed-case address with a wrong checksum is 400 invalid_address",
    request: { method: "GET", path: `/api/${SOME_ADDRESS.replace("E0F", "e0F")}` },
    expect: {
      status: 400,
      contentType: PROBLEM,
      body: problem(400, "invalid_address", "Invalid address", INVALID_ADDRESS)
    }
  },
  {
    name: "a lookup on a gateway without sweeper settings is 404 sweeper_not_configured",
    request: { method: "GET", path: `/api/${SOME_ADDRESS.toLowerCase()}` },
    expect: {
      status: 404,
      contentType: PROBLEM,
      headers: { "access-control-allow-origin": "*" },
      body: problem(404, "sweeper_not_configured", NOT_CONFIGURED_TITLE, NOT_CONFIGURED)
    }
  },
  {
    name: "/api/orders is its own endpoint, not an address",
    request: { method: "GET", path: "/api/orders" },
    expect: {
      status: 404,
      contentType: PROBLEM,
      body: problem(404, "sweeper_not_configured", NOT_CONFIGURED_TITLE, NOT_CONFIGURED)
    }
  },
  {
    name: "/api/all-orders is its own endpoint, not an address",
    request: { method: "GET", path: "/api/all-orders" },
    expect: {
      status: 404,
      contentType: PROBLEM,
      body: problem(404, "sweeper_not_configured", NOT_CONFIGURED_TITLE, NOT_CONFIGURED)
    }
  },
  {
    name: "a CORS preflight of a lookup is 204 without a body",
    request: {
      method: "OPTIONS",
      path: `/api/${SOME_ADDRESS}`,
      headers: { origin: "https://app.example", "access-control-request-method": "GET" }
    },
    expect: {
      status: 204,
      contentType: "",
      headers: {
        "access-control-allow-origin": "*",
        "access-control-allow-methods": "GET, OPTIONS",
        "access-control-max-age": "600"
      }
    }
  },
  {
    name: "a lookup by POST is 405 allowing GET, HEAD and OPTIONS",
    request: post("/api/orders", {}),
    expect: {
      status: 405,
      contentType: PROBLEM,
      headers: { allow: "GET, HEAD, OPTIONS" },
      body: problem(405, "method_not_allowed", "Method not allowed", "This endpoint accepts GET, HEAD, OPTIONS.")
    }
  }
]
