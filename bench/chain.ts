// A batch of calls through walletgate's ERC-4337 pipeline beside a plain transaction sent with viem, on a devnet
// (anvil + alto) with 1 s blocks as a real network has (RUNS: 20 at a time for 100 users, then 100 at a time for 500
// users, on the same devnet), then on automine.
//
// Each side runs `batches` requests for `users` users, `concurrency` at a time, each timed from the request to its
// inclusion. walletgate: `POST /v1/kernel/tx?wait=10` (3 calls from the user's Safe, sponsored by the paymaster;
// every Safe deployed by a first batch before the clock starts), in process through `gateway.fetch`. viem: one
// EOA per user, `sendTransaction` then `waitForTransactionReceipt`. The gateway talks to anvil and alto through a
// counting proxy: the JSON-RPC round trips of one request before `eth_sendUserOperation`, and the calls per batch.
// Gas is each side's own: the operation's `actualGasUsed`, the transaction's `gasUsed`. The CPU time of anvil, alto
// and this process (gateway, proxies, load) in the walletgate run is printed: on two cores, they share the machine.
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { embeddedPorts, makeGateway } from "@walletgate/core"
import { hashClientSecret } from "@walletgate/core/auth"
import { anvilMnemonic, type Devnet, startDevnet } from "@walletgate/core/devnet"
import { createWalletClient, type Hex, http, parseEther, toHex } from "viem"
import { mnemonicToAccount } from "viem/accounts"
import { keepResults, printTable } from "./table.ts"

/** One load: `batches` requests for `users` users, `concurrency` at a time. */
interface Load {
  readonly users: number
  readonly batches: number
  readonly concurrency: number
}
/** The loads on 1 s blocks, in order on one devnet (the second's first users' Safes are deployed by the first). */
const RUNS: ReadonlyArray<Load> = [
  { users: 100, batches: 200, concurrency: 20 },
  { users: 500, batches: 1_000, concurrency: 100 }
]
const CLIENT = { clientId: "wgc_bench", clientSecret: "wgs_bench_secret" }

/** A JSON-RPC proxy to `target` that notes the methods of each call it forwards in `calls`, in order. */
const countingProxy = async (target: string, calls: Array<ReadonlyArray<string>>) => {
  const server = createServer(async (req, res) => {
    const chunks: Array<Buffer> = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks).toString()
    const parsed = JSON.parse(body) as { method: string } | ReadonlyArray<{ method: string }>
    calls.push("method" in parsed ? [parsed.method] : parsed.map((call) => call.method))
    const forward = () => fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body })
    // A pooled connection the target closed meanwhile fails at once: one more try, as a client of the target would.
    const answer = await forward()
      .catch(forward)
      .catch(() => undefined)
    if (answer === undefined) {
      res.destroy()
      return
    }
    res.writeHead(answer.status, { "content-type": "application/json" })
    res.end(await answer.text())
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** User + system CPU seconds of the process listening with `--port <port>`. */
const cpuSecondsOf = (port: number): number => {
  const line = execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" })
    .split("\n")
    .find((each) => each.includes(`--port ${port} `) || each.endsWith(`--port ${port}`))
  const pid = line?.trim().split(/\s+/)[0]
  if (pid === undefined) return Number.NaN
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? []
  return (Number(fields[11]) + Number(fields[12])) / 100
}

const percentile = (values: ReadonlyArray<number>, p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ?? Number.NaN

/** Runs `task(0 … count - 1)`, `concurrency` at a time; each one's duration in ms, and the whole wall time. */
const load = async (count: number, concurrency: number, task: (n: number) => Promise<void>) => {
  const latencies: Array<number> = []
  let next = 0
  const started = performance.now()
  const worker = async () => {
    while (next < count) {
      const n = next++
      const at = performance.now()
      await task(n)
      latencies.push(performance.now() - at)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  const seconds = (performance.now() - started) / 1000
  return { perSecond: count / seconds, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) }
}

const measure = async (devnet: Devnet, blocks: string, { users, batches, concurrency }: Load) => {
  // The calls to the node and to the bundler, in the order they were made.
  const calls: Array<ReadonlyArray<string>> = []
  const node = await countingProxy(devnet.anvil.rpcUrl, calls)
  const bundler = await countingProxy(devnet.bundlerUrl, calls)
  const erc4337 = devnet.network.erc4337 ?? {}
  const gateway = makeGateway({
    ports: embeddedPorts({
      masterSecret: "bench-master-secret-0123456789abcdef",
      // The app's and the network's hourly gas budgets raised: 500 Safes deployed (≈ 0.4 M gas each) and 1,000
      // batches spend twice the test networks' default 100 M per app, which would be answered 429.
      networks: [
        {
          ...devnet.network,
          rpcUrl: node.url,
          erc4337: { ...erc4337, bundlerUrl: bundler.url },
          spend: { perApp: 10_000_000_000, perNetwork: 10_000_000_000 }
        }
      ],
      apps: [{ ...CLIENT, secretHash: hashClientSecret(CLIENT.clientSecret), providers: [], testMode: true }]
    }),
    loggers: []
  })
  const call = async (path: string, body: unknown, token?: string) => {
    const response = await gateway.fetch(
      new Request(`http://gateway.bench${path}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
        },
        body: JSON.stringify(body)
      })
    )
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  }
  const token = String(
    (await call("/v1/auth", { client_id: CLIENT.clientId, client_secret: CLIENT.clientSecret })).body.access_token
  )
  // Plain accounts, past the precompiles (0x01–0x11, 0x100).
  /** The batches that did not end confirmed within their request (none should). */
  const unconfirmed: Array<string> = []
  const target = (n: number): Hex => toHex(0x10_000 + n, { size: 20 })
  const batch = async (n: number) => {
    const answer = await call(
      "/v1/kernel/tx?wait=10",
      {
        userId: `test:bench-${n % users}`,
        chain: devnet.network.slug,
        to: [target(n), target(n + 1), target(n + 2)],
        value: ["0", "0", "0"],
        data: ["0x", "0x", "0x"],
        auth: ""
      },
      token
    )
    if (answer.body.status !== "confirmed") {
      unconfirmed.push(`batch ${n}: ${answer.status} ${String(answer.body.status ?? answer.body.code)}`)
    }
    return answer.body
  }
  const gasOf = async (userOpHash: unknown) => {
    const answer = await fetch(devnet.bundlerUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getUserOperationReceipt", params: [userOpHash] })
    })
    // None when the operation was not included (its batch is then among the unconfirmed, printed below).
    const used = ((await answer.json()) as { result?: { actualGasUsed: Hex } | null }).result?.actualGasUsed
    return used === undefined ? undefined : BigInt(used)
  }
  // Every user's Safe deployed first (deploying operations go alone), the gas of the last user's kept: a Safe no
  // earlier load on the same devnet deployed.
  let deployedLast: Record<string, unknown> = {}
  await load(users, concurrency, async (n) => {
    const answer = await batch(n)
    if (n === users - 1) deployedLast = answer
  })
  const gasWithDeployment = await gasOf(deployedLast.userOpHash)
  const cpu = () => {
    const own = process.cpuUsage()
    return [cpuSecondsOf(devnet.anvil.port), cpuSecondsOf(devnet.alto.port), (own.user + own.system) / 1e6]
  }
  const cpuBefore = cpu()
  calls.length = 0
  const walletgate = await load(batches, concurrency, async (n) => void (await batch(n)))
  const chainCpu = cpu().map((seconds, index) => seconds - (cpuBefore[index] ?? 0))
  const callsPerBatch = calls.length / batches
  calls.length = 0
  const lone = await batch(batches)
  const roundTrips = calls.findIndex((methods) => methods.includes("eth_sendUserOperation"))
  const beforeSend = calls.slice(0, roundTrips).map((methods) => methods.join("+"))
  const gas = await gasOf(lone.userOpHash)

  const senders = Array.from({ length: users }, (_, n) =>
    createWalletClient({
      chain: devnet.chain,
      account: mnemonicToAccount(anvilMnemonic, { addressIndex: 20 + n }),
      transport: http(devnet.anvil.rpcUrl),
      pollingInterval: blocks === "automine" ? 20 : 100
    })
  )
  for (const sender of senders) await devnet.setBalance(sender.account.address, parseEther("1"))
  let plainGas = 0n
  const viem = await load(batches, concurrency, async (n) => {
    const sender = senders[n % users]
    if (sender === undefined) throw new Error("no sender")
    const hash = await sender.sendTransaction({ to: target(n), value: 0n })
    plainGas = (await devnet.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 100 })).gasUsed
  })
  await gateway.dispose()
  await node.close()
  await bundler.close()
  if (unconfirmed.length > 0)
    console.log(`${blocks}: ${unconfirmed.length} batches not confirmed: ${unconfirmed.join("; ")}`)
  console.log(`${blocks}: before eth_sendUserOperation: ${beforeSend.join(", ")}`)
  const figures = {
    blocks,
    users,
    batches,
    concurrency,
    beforeSend,
    walletgate,
    viem,
    roundTrips,
    gas,
    gasWithDeployment,
    plainGas,
    chainCpu
  }
  return { ...figures, callsPerBatch, unconfirmed: unconfirmed.length }
}

/** Measures on 1 s blocks and on automine, prints the table and writes `bench/results/chain.json`. */
export const run = async (): Promise<void> => {
  const results = []
  for (const blockTimeSeconds of [1, undefined]) {
    const devnet = await startDevnet(blockTimeSeconds === undefined ? {} : { blockTimeSeconds })
    try {
      for (const each of blockTimeSeconds === undefined ? RUNS.slice(0, 1) : RUNS) {
        results.push(await measure(devnet, blockTimeSeconds === undefined ? "automine" : `${blockTimeSeconds} s`, each))
      }
    } finally {
      await devnet.stop()
    }
  }
  printTable(
    [
      "blocks",
      "c / users",
      "walletgate batch/s",
      "viem tx/s",
      "× throughput",
      "p50 ms (wg / viem)",
      "p99 ms (wg / viem)",
      "round trips before send",
      "calls per batch",
      "CPU s: anvil / alto / bench (wall s)"
    ],
    results.map((r) => [
      r.blocks,
      `${r.concurrency} / ${r.users}`,
      r.walletgate.perSecond.toFixed(1),
      r.viem.perSecond.toFixed(1),
      (r.walletgate.perSecond / r.viem.perSecond).toFixed(2),
      `${r.walletgate.p50.toFixed(0)} / ${r.viem.p50.toFixed(0)}`,
      `${r.walletgate.p99.toFixed(0)} / ${r.viem.p99.toFixed(0)}`,
      String(r.roundTrips),
      r.callsPerBatch.toFixed(1),
      `${r.chainCpu.map((seconds) => seconds.toFixed(1)).join(" / ")} (${(r.batches / r.walletgate.perSecond).toFixed(1)})`
    ])
  )
  const first = results[0]
  if (first !== undefined) {
    console.log(
      `\ngas: a 3-call batch ${first.gas} (${first.gasWithDeployment} with the Safe's deployment); a plain transaction ${first.plainGas}`
    )
  }
  keepResults("chain", {
    results: results.map((r) => ({
      ...r,
      gas: `${r.gas}`,
      gasWithDeployment: `${r.gasWithDeployment}`,
      plainGas: `${r.plainGas}`
    }))
  })
}
