// The production Lambda example run as AWS runs it: its bundle under AWS's runtime interface client (aws-lambda-ric)
// polling a loopback Runtime API, against Redis (a real redis-server), anvil and the alto bundler (the worker's shared
// devnet). The walk-through answers as a client expects, and nothing is done after an answer: between each answer and
// the next event the runtime process sends no RPC (to the node or the bundler: both behind counting proxies) and no
// Redis command (seen by Redis MONITOR). Where aws-lambda-ric could not be built, a minimal import() loop speaks the
// same protocol, and the test's name says so.
import { generateKeyPairSync } from "node:crypto"
import { mkdtemp, writeFile } from "node:fs/promises"
import { createServer, type Server } from "node:http"
import { type AddressInfo, createConnection, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { LambdaHttpResult } from "@walletgate/lambda"
import type { Hash } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventFor } from "../../../packages/adapter-lambda/test/events"
import { type RpcProxy, startRpcProxy } from "../../../packages/core/test/devnet/rpcProxy"
import {
  freshAddress,
  freshMasterSecret,
  type SharedDevnet,
  sharedDevnet
} from "../../../packages/core/test/devnet/shared"
import { phoneTestApp, registerApps } from "../../../packages/store-redis/test/apps"
import { type RedisServer, startRedisServer } from "../../../packages/store-redis/test/redis-server"
import { buildDir, buildHandlers } from "../scripts/build"
import { type Answer, type Runtime, type RuntimeApi, runtimeKind, spawnRuntime, startRuntimeApi } from "./runtimeApi"

/** How long the runtime is watched for work after each answer, while it waits for its next event. */
const WATCH_MS = 500
const APP = { clientId: "wgc_lambda", clientSecret: "wgs_lambda_example_secret" }
const PHONE = "+14155552671"
const SIGNING_KEY = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString()

/** The SMS webhook (`WALLETGATE_SMS=webhook`): keeps each message the function sends. */
const startSmsWebhook = async () => {
  const messages: Array<{ readonly to: string; readonly body: string }> = []
  const server: Server = createServer((request, response) => {
    let text = ""
    request.on("data", (chunk: Buffer) => {
      text += chunk.toString()
    })
    request.on("end", () => {
      messages.push(JSON.parse(text) as { to: string; body: string })
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sms`,
    /** The code of the last message to `phone`. */
    codeFor: (phone: string) => /\b(\d{6})\b/.exec(messages.filter((m) => m.to === phone).at(-1)?.body ?? "")?.[1],
    stop: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** An OTLP/HTTP receiver (`OTEL_EXPORTER_OTLP_ENDPOINT`): every POST, its path, body and when it arrived. */
const startOtlpReceiver = async () => {
  const posts: Array<{ readonly path: string; readonly body: string; readonly at: number }> = []
  const server: Server = createServer((request, response) => {
    let text = ""
    request.on("data", (chunk: Buffer) => {
      text += chunk.toString()
    })
    request.on("end", () => {
      posts.push({ path: request.url ?? "", body: text, at: Date.now() })
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    posts,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** Redis MONITOR: the server's own time (ms) of every command any client sends from now on. */
const monitorRedis = async (port: number) => {
  const times: Array<number> = []
  const socket: Socket = createConnection({ host: "127.0.0.1", port })
  let pending = ""
  socket.setEncoding("utf8")
  socket.on("data", (chunk: string) => {
    pending += chunk
    const lines = pending.split("\r\n")
    pending = lines.pop() ?? ""
    for (const line of lines) {
      // +1732574400.123456 [0 127.0.0.1:50000] "GET" "walletgate:…"
      const at = /^\+(\d+\.\d+) \[/.exec(line)?.[1]
      if (at !== undefined) times.push(Number(at) * 1000)
    }
  })
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()))
  socket.write("MONITOR\r\n")
  return { commandsSince: (ms: number) => times.filter((at) => at >= ms).length, stop: () => socket.destroy() }
}

describe(`examples/lambda under ${runtimeKind}${runtimeKind === "aws-lambda-ric" ? "" : " (aws-lambda-ric is not built here: scripts/ensure-ric.sh, which npm test runs)"}`, {
  tags: ["devnet"],
  timeout: 120_000
}, () => {
  let devnet: SharedDevnet
  let redis: RedisServer
  let node: RpcProxy
  let bundler: RpcProxy
  let sms: Awaited<ReturnType<typeof startSmsWebhook>>
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>
  let monitor: Awaited<ReturnType<typeof monitorRedis>>
  let api: RuntimeApi
  let runtime: Runtime

  beforeAll(async () => {
    await buildHandlers()
    devnet = await sharedDevnet()
    redis = await startRedisServer()
    node = await startRpcProxy(devnet.anvil.rpcUrl)
    bundler = await startRpcProxy(devnet.bundlerUrl)
    sms = await startSmsWebhook()
    otlp = await startOtlpReceiver()
    // The operator registers the app once, in the Redis every container reads.
    await registerApps({ url: redis.url }, [phoneTestApp(APP)])
    monitor = await monitorRedis(redis.port)
    api = await startRuntimeApi()
    const paymaster = devnet.network.erc4337?.paymaster
    if (paymaster === undefined) throw new Error("the shared devnet's network has no paymaster")
    runtime = spawnRuntime({
      api,
      taskRoot: buildDir,
      env: {
        REDIS_URL: redis.url,
        WALLETGATE_MASTER_SECRET: freshMasterSecret(),
        WALLETGATE_SIGNING_KEY: SIGNING_KEY,
        WALLETGATE_ISSUER: "https://wallet.example.com",
        WALLETGATE_SMS: "webhook",
        WALLETGATE_SMS_WEBHOOK_URL: sms.url,
        WALLETGATE_NETWORKS: JSON.stringify({
          networks: {
            anvil: {
              chainId: devnet.anvil.chainId,
              testnet: true,
              rpcUrls: [node.url],
              bundlerUrl: bundler.url,
              paymaster: { address: paymaster.address, signerKey: { env: "ANVIL_PAYMASTER_KEY" } },
              pollingIntervalMs: 50
            }
          }
        }),
        ANVIL_PAYMASTER_KEY: paymaster.signerKey,
        // Telemetry over OTLP/HTTP JSON: flushed before each answer (the example's default on Lambda).
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_SERVICE_NAME: "walletgate-lambda"
      }
    })
  })

  afterAll(async () => {
    await runtime?.kill()
    await api?.stop()
    monitor?.stop()
    await sms?.stop()
    await otlp?.stop()
    await node?.stop()
    await bundler?.stop()
    await redis?.stop()
  })

  /**
   * Invokes the function with an HTTP API (payload 2.0) event; once it answered and asks for its next event, waits a
   * while and checks it did nothing meanwhile: no RPC to the node or the bundler, no Redis command.
   */
  const invoke = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    node.reset()
    bundler.reset()
    const exportsBefore = otlp.posts.length
    const answer: Answer = await api.invoke(
      eventFor("HTTP API v2", {
        method,
        path,
        headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    )
    expect(answer.kind, runtime.output()).toBe("response")
    const rpcsBeforeAnswer = node.requests() + bundler.requests()
    // The request's spans arrived before the answer (the flush ran inside the invoke), and nothing is exported after.
    const exported = otlp.posts.slice(exportsBefore)
    const exportsAtAnswer = otlp.posts.length
    expect(
      exported.some(
        (post) => post.path === "/v1/traces" && post.body.includes(`"stringValue":${JSON.stringify(path)}`)
      ),
      `the spans of ${method} ${path}`
    ).toBe(true)
    await api.waiting()
    await new Promise((resolve) => setTimeout(resolve, WATCH_MS))
    expect({
      rpc: node.requests() + bundler.requests() - rpcsBeforeAnswer,
      redis: monitor.commandsSince(answer.at),
      otlp: otlp.posts.length - exportsAtAnswer
    }).toEqual({ rpc: 0, redis: 0, otlp: 0 })
    const result = answer.body as LambdaHttpResult
    return { status: result.statusCode, body: JSON.parse(result.body || "null") as Record<string, unknown> }
  }

  it("walks through sign-in, an app token, a batch that deploys the Safe, its status and txStatus; no work after any answer", async () => {
    const started = Date.now()
    const sent = await invoke("POST", "/functions/v1/signInWithOTP", { phone: PHONE })
    expect(sent).toEqual({ status: 200, body: { sent: true, expires_in: 300, resend_after: 60 } })
    const code = sms.codeFor(PHONE)
    expect(code).toMatch(/^\d{6}$/)

    const verified = await invoke("POST", "/functions/v1/verifyOTP", { phone: PHONE, token: code })
    expect(verified.status).toBe(200)
    const userId = `phone:${String((verified.body.user as { id: string }).id)}`
    const jwt = String(verified.body.access_token)

    const granted = await invoke("POST", "/v1/auth", { client_id: APP.clientId, client_secret: APP.clientSecret })
    expect(granted.status).toBe(200)
    const bearer = { authorization: `Bearer ${String(granted.body.access_token)}` }

    const to = freshAddress()
    const tx = await invoke(
      "POST",
      "/v1/kernel/tx",
      { userId, chain: "anvil", to: [to], value: ["0"], data: ["0x"], auth: jwt },
      bearer
    )
    expect(tx.status).toBe(200)
    expect(tx.body).toMatchObject({ userId, chain: "anvil", status: "submitted" })

    // Its status, asked as a client would: each ask reads the bundler and the node inside the request.
    let status = tx
    for (let ask = 0; ask < 100 && status.body.status === "submitted"; ask++) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      status = await invoke("GET", `/v1/kernel/tx/${String(tx.body.id)}`, undefined, bearer)
    }
    expect(status.body).toMatchObject({ id: tx.body.id, userOpHash: tx.body.userOpHash, status: "confirmed" })
    const receipt = await devnet.publicClient.getTransactionReceipt({ hash: status.body.txHash as Hash })
    expect(receipt.status).toBe("success")
    // The wallet is a deployed Safe now: the operation deployed it and ran the call.
    expect(await devnet.publicClient.getCode({ address: tx.body.account as Hash })).not.toBeUndefined()

    const byHash = await invoke("POST", "/v1/kernel/txStatus", { userOpHash: tx.body.userOpHash }, bearer)
    expect(byHash).toMatchObject({ status: 200, body: { txHash: status.body.txHash } })

    expect((await invoke("GET", "/v1/health")).status).toBe(200)
    // The watch sees the function's Redis commands: they were all made before its answers.
    expect(monitor.commandsSince(started)).toBeGreaterThan(10)
  }, 120_000)

  it("sees work done after an answer: a handler that answers, then calls the node, is caught by the same watch", async () => {
    // The control of the check above: the same runtime, a handler of three lines that leaves work behind.
    const root = await mkdtemp(join(tmpdir(), "walletgate-lambda-"))
    await writeFile(
      join(root, "late.mjs"),
      `const call = () => fetch(${JSON.stringify(node.url)}, { method: "POST", body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}' })
await call() // at init, as the example's gateway connects while it starts
export const handler = async () => {
  setTimeout(call, 50)
  return { statusCode: 200, body: "{}" }
}\n`
    )
    const lateApi = await startRuntimeApi()
    const late = spawnRuntime({ api: lateApi, taskRoot: root, handler: "late.handler" })
    try {
      await lateApi.waiting() // its init is done
      node.reset()
      const answer = await lateApi.invoke({})
      expect(answer.kind).toBe("response")
      expect(node.requests()).toBe(0)
      await lateApi.waiting()
      await new Promise((resolve) => setTimeout(resolve, WATCH_MS))
      expect(node.requests(), late.output()).toBe(1)
    } finally {
      await late.kill()
      await lateApi.stop()
    }
  })

  it("fails the init with the missing setting named, never a secret: no REDIS_URL", async () => {
    const failing = await startRuntimeApi()
    const child = spawnRuntime({
      api: failing,
      taskRoot: buildDir,
      env: { WALLETGATE_SIGNING_KEY: SIGNING_KEY, WALLETGATE_MASTER_SECRET: "m".repeat(40) }
    })
    try {
      await new Promise<void>((resolve) => {
        const poll = setInterval(() => {
          if (failing.initError() !== undefined || child.child.exitCode !== null) {
            clearInterval(poll)
            resolve()
          }
        }, 50)
      })
      const reported = JSON.stringify(failing.initError() ?? child.output())
      expect(reported).toMatch(/REDIS_URL is not set/)
      expect(reported).not.toContain("m".repeat(40))
      expect(reported).not.toContain(SIGNING_KEY.split("\n")[1])
    } finally {
      await child.kill()
      await failing.stop()
    }
  })
})
