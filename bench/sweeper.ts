// The dust-sweeping lookup: GET /api/:address for an address holding 100 supported tokens on a local anvil,
// through gateway.handle. Three cases: from a cold index (a new gateway, the order index read from block 0),
// after a new block (the index catches up one block), and with the index already at the head. For each,
// the RPC round trips are counted by a JSON-RPC proxy in front of the node (one gateway reads through it),
// and the latency is measured on another gateway that reads the node directly (no proxy hop): SAMPLES
// lookups after a warm-up, median and p95. Mining the new block is not timed.
import { mkdirSync, writeFileSync } from "node:fs"
import { embeddedPorts, type Gateway, makeGateway, type SweeperOptions } from "@walletgate/core"
import {
  anvilMnemonic,
  deployTestToken,
  type LocalNetwork,
  startLocalNetwork,
  testTokenArtifact
} from "@walletgate/core/devnet"
import { type Address, createWalletClient, http, parseEther, toHex } from "viem"
import { mnemonicToAccount } from "viem/accounts"
import { startRpcProxy } from "../packages/core/test/devnet/rpcProxy.ts"

const TOKENS = 100
const SAMPLES = 200
const WARM_UP = 20
const COLD_SAMPLES = 20
const HOLDER = "0x52908400098527886E0F7030069857D2E4169EE7"

const round = (value: number, digits = 1) => Number(value.toFixed(digits))
const quantile = (values: ReadonlyArray<number>, q: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0
}

const table = (header: ReadonlyArray<string>, lines: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((title, i) => Math.max(title.length, ...lines.map((line) => line[i]?.length ?? 0)))
  const format = (cells: ReadonlyArray<string>) =>
    `| ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join(" | ")} |`
  return [format(header), format(widths.map((width) => "-".repeat(width))), ...lines.map(format)].join("\n")
}

/** Deploys TOKENS test tokens and mints each to HOLDER, one transaction after another. */
const deployTokens = async (local: LocalNetwork) => {
  const deployer = createWalletClient({
    chain: local.publicClient.chain,
    transport: http(local.anvil.rpcUrl),
    account: mnemonicToAccount(anvilMnemonic, { addressIndex: 0 })
  })
  const tokens: Array<Address> = []
  for (let i = 0; i < TOKENS; i++) {
    const address = await deployTestToken(deployer, local.publicClient, {
      name: `Token ${i}`,
      symbol: `T${i}`,
      decimals: 6
    })
    const hash = await deployer.writeContract({
      address,
      abi: testTokenArtifact.abi,
      functionName: "mint",
      args: [HOLDER, BigInt(i + 1) * 1_000_000n]
    })
    await local.publicClient.waitForTransactionReceipt({ hash })
    tokens.push(address)
  }
  return tokens
}

/** Measures, prints the table and writes `bench/results/sweeper.json`. */
export async function run(): Promise<void> {
  const local = await startLocalNetwork()
  const counter = await startRpcProxy(local.anvil.rpcUrl)
  const gateways: Array<Gateway> = []
  try {
    const tokens = await deployTokens(local)
    const mine = () =>
      fetch(local.anvil.rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_mine", params: [toHex(1)] })
      })
    await fetch(local.anvil.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "anvil_setBalance",
        params: [HOLDER, toHex(parseEther("1"))]
      })
    })
    const sweeper: SweeperOptions = {
      network: local.network.slug,
      tokens: tokens.map((address, i) => ({ address, symbol: `T${i}`, decimals: 6 })),
      prices: { eth: 2000, tokens: Object.fromEntries(tokens.map((token) => [token, 1])) },
      // What is measured is a lookup that reads the chain: none is answered from the cache or refused by the
      // per-client budget (every request here comes from one unknown client).
      cacheSeconds: 0,
      lookupsPerIpPerMinute: 1_000_000
    }
    const gatewayOn = (rpcUrl: string) => {
      const gateway = makeGateway({
        ports: embeddedPorts({ networks: [{ ...local.network, rpcUrl }], sweeper }),
        loggers: []
      })
      gateways.push(gateway)
      return gateway
    }
    const lookup = async (gateway: Gateway) => {
      const started = performance.now()
      const response = await gateway.handle({
        method: "GET",
        path: `/api/${HOLDER}`,
        query: new URLSearchParams(),
        headers: {}
      })
      const ms = performance.now() - started
      if (response.status !== 200) throw new Error(`lookup answered ${response.status}: ${response.body}`)
      const portfolio = (JSON.parse(response.body) as { portfolio: Array<unknown> }).portfolio
      if (portfolio.length !== TOKENS + 1) throw new Error(`portfolio of ${portfolio.length} entries`)
      return ms
    }
    const counted = async (gateway: Gateway) => {
      counter.reset()
      await lookup(gateway)
      return { requests: counter.requests(), methods: counter.methods() }
    }

    // Round trips, through the counter.
    const throughCounter = gatewayOn(counter.url)
    const coldTrips = await counted(throughCounter)
    await mine()
    const newBlockTrips = await counted(throughCounter)
    const atHeadTrips = await counted(throughCounter)

    // Latency, direct to the node.
    const cold: Array<number> = []
    for (let i = 0; i < COLD_SAMPLES; i++) cold.push(await lookup(gatewayOn(local.anvil.rpcUrl)))
    const direct = gatewayOn(local.anvil.rpcUrl)
    for (let i = 0; i < WARM_UP; i++) await lookup(direct)
    const newBlock: Array<number> = []
    const atHead: Array<number> = []
    for (let i = 0; i < SAMPLES; i++) {
      await mine()
      newBlock.push(await lookup(direct))
      atHead.push(await lookup(direct))
    }

    const rows = [
      { case: "cold index (from block 0)", trips: coldTrips, samples: cold },
      { case: "after a new block", trips: newBlockTrips, samples: newBlock },
      { case: "index at the head", trips: atHeadTrips, samples: atHead }
    ].map((row) => ({
      case: row.case,
      rpcRoundTrips: row.trips.requests,
      rpcMethods: row.trips.methods,
      latencyMsMedian: round(quantile(row.samples, 0.5), 2),
      latencyMsP95: round(quantile(row.samples, 0.95), 2),
      samples: row.samples.length
    }))
    console.log(
      table(
        [`GET /api/:address, ${TOKENS} tokens`, "RPC round trips", "methods", "median ms", "p95 ms", "samples"],
        rows.map((row) => [
          row.case,
          String(row.rpcRoundTrips),
          row.rpcMethods.join(" + "),
          String(row.latencyMsMedian),
          String(row.latencyMsP95),
          String(row.samples)
        ])
      )
    )

    const results = new URL("./results/", import.meta.url)
    mkdirSync(results, { recursive: true })
    const report = {
      measuredAt: new Date().toISOString(),
      node: process.version,
      request: `GET /api/:address of an address holding ${TOKENS} supported tokens and ETH (200), local anvil`,
      rows
    }
    writeFileSync(new URL("sweeper.json", results), `${JSON.stringify(report, null, 2)}\n`)
  } finally {
    await Promise.all(gateways.map((gateway) => gateway.dispose()))
    await counter.stop()
    await local.stop()
  }
}
