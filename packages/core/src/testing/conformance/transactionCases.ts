// Rows of the money routes as far as a gateway without a network answers them: kernel tx, payout, health.
import { CONFORMANCE_ACCOUNT, CONFORMANCE_API_KEY } from "./gateway"
import { grant, JSON_TYPE, KERNEL_TX, PROBLEM, post, problem, withToken } from "./requests"
import type { ConformanceCase } from "./types"

const someCall = { to: ["0x52908400098527886E0F7030069857D2E4169EE7"], value: ["0"], data: ["0x"], auth: "" }

/** Rows of `POST /v1/kernel/tx`, the payout route and the health check. */
export const transactionCases: ReadonlyArray<ConformanceCase> = [
  {
    name: "kernel tx without an access token is 401 invalid_token",
    request: post(KERNEL_TX, { userId: "phone:x", chain: "anvil", ...someCall }),
    expect: {
      status: 401,
      contentType: PROBLEM,
      headers: { "www-authenticate": 'Bearer error="invalid_token"' },
      body: problem(401, "invalid_token", "Invalid token", "The token is invalid or expired.")
    }
  },
  {
    name: "kernel tx on a chain the gateway does not serve is 400 unsupported_chain",
    before: [grant],
    request: withToken(post(KERNEL_TX, { userId: "phone:x", chain: "mainnet", ...someCall })),
    expect: {
      status: 400,
      contentType: PROBLEM,
      body: problem(400, "unsupported_chain", "Unsupported chain", 'This gateway does not serve the chain "mainnet".')
    }
  },
  {
    name: "kernel tx names each invalid field and index",
    before: [grant],
    request: withToken(
      post(KERNEL_TX, { userId: "x", chain: "anvil", to: ["0x12"], value: ["01"], data: ["0xabc"], auth: "" })
    ),
    expect: {
      status: 400,
      contentType: PROBLEM,
      body: problem(400, "invalid_request", "Invalid request", "4 fields are invalid.", {
        errors: [
          { path: "/userId", message: "Expected <provider>:<user_id>, e.g. phone:5c0f…" },
          { path: "/to/0", message: "Expected an address (mixed case must carry a valid EIP-55 checksum)" },
          { path: "/value/0", message: "Expected a decimal string in uint256 range" },
          { path: "/data/0", message: "Expected an even number of hex digits" }
        ]
      })
    }
  },
  {
    name: "an unknown kernel transaction is 404 tx_not_found",
    before: [grant],
    request: withToken({ method: "GET", path: `${KERNEL_TX}/00000000-0000-4000-8000-000000000000` }),
    expect: {
      status: 404,
      contentType: PROBLEM,
      body: problem(404, "tx_not_found", "Transaction not found", "No such transaction.")
    }
  },
  {
    name: "a payout without X-API-KEY is 401 invalid_api_key",
    request: post(`/v1/anvil/account/${CONFORMANCE_ACCOUNT}/payout/disperse`, {}),
    expect: {
      status: 401,
      contentType: PROBLEM,
      body: problem(401, "invalid_api_key", "Invalid API key", "Send a valid, unrevoked key in the X-API-KEY header.")
    }
  },
  {
    name: "a payout with an unknown key is 401 invalid_api_key",
    request: post(
      `/v1/anvil/account/${CONFORMANCE_ACCOUNT}/payout/disperse`,
      {},
      { "x-api-key": `${CONFORMANCE_API_KEY}x` }
    ),
    expect: {
      status: 401,
      contentType: PROBLEM,
      body: problem(401, "invalid_api_key", "Invalid API key", "Send a valid, unrevoked key in the X-API-KEY header.")
    }
  },
  {
    name: "a payout on a network the gateway does not serve is 404 unknown_network",
    request: post(`/v1/anvil/account/${CONFORMANCE_ACCOUNT}/payout/disperse`, {}, { "x-api-key": CONFORMANCE_API_KEY }),
    expect: {
      status: 404,
      contentType: PROBLEM,
      body: problem(404, "unknown_network", "Unknown network", 'This gateway does not serve the network "anvil".')
    }
  },
  {
    name: "a payout path whose address is not an address is 400 invalid_request",
    request: post("/v1/anvil/account/0xNOT-AN-ADDRESS/payout/disperse", {}, { "x-api-key": CONFORMANCE_API_KEY }),
    expect: {
      status: 400,
      contentType: PROBLEM,
      body: problem(400, "invalid_request", "Invalid request", "1 field is invalid.", {
        errors: [{ path: "/address", message: "Expected an address (mixed case must carry a valid EIP-55 checksum)" }]
      })
    }
  },
  {
    name: "the health check lists each network's pipeline",
    request: { method: "GET", path: "/v1/health" },
    expect: { status: 200, contentType: JSON_TYPE, body: { status: "ok", networks: [] } }
  }
]
