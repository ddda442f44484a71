// The Redis client the stores make from a URL, against a real redis-server: RESP framing across TCP reads, pipelining,
// large replies, authentication, database index, TLS, the NOSCRIPT fallback and a Redis that dies under traffic.
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createConnection, createServer, type Server, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { OtpStore, PhoneE164, RateLimiter, StoreUnavailable } from "@walletgate/core"
import { type RedisStorePorts, RedisStores, type RedisStoresOptions } from "@walletgate/redis"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { afterEach, describe, expect, it } from "vitest"
import { type OwnedRedis, openRedis, parseRedisUrl } from "../src/internal/client"
import { encodeCommand, RedisProtocolError, RedisReplyError, type Reply, replyReader } from "../src/internal/resp"
import { eventually } from "./http"
import { startRedisServer } from "./redis-server"

const NOW = 1_700_000_000_000

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const startServer = async (options: Parameters<typeof startRedisServer>[0] = {}) => {
  const server = await startRedisServer(options)
  cleanups.push(() => server.stop())
  return server
}

const clientOf = async (url: string): Promise<OwnedRedis> => {
  const client = openRedis({ address: parseRedisUrl(url), connectTimeoutMs: 1000, name: "walletgate-test" })
  cleanups.push(() => client.quit(1000))
  expect(await client.ready(5000)).toBe(true)
  return client
}

/** The stores over `options`, with every log line kept in `lines`. */
const storesWith = (options: RedisStoresOptions) => {
  const lines: Array<string> = []
  const capture = Logger.map(Logger.formatJson, (line) => {
    lines.push(line)
  })
  const runtime = ManagedRuntime.make(RedisStores.layer(options).pipe(Layer.provideMerge(Logger.layer([capture]))))
  cleanups.push(() => runtime.dispose())
  return { runtime, lines }
}

const probe = RateLimiter.use((limiter) => limiter.consume([{ key: "probe", limit: 1_000_000, windowMs: 60_000 }], NOW))
const answers = (runtime: ManagedRuntime.ManagedRuntime<RedisStorePorts, never>) =>
  runtime.runPromise(probe).then(
    () => true,
    () => false
  )

/**
 * A TCP proxy to `port` that hands bytes on, both ways, in pieces of `pieceBytes`, one piece per event-loop turn, so
 * that each side reads each frame in many parts; `cut()` drops every connection at once, wherever the bytes are.
 */
const splittingProxy = async (port: number, pieceBytes: number): Promise<{ url: string; cut: () => void }> => {
  const sockets = new Set<Socket>()
  const relay = (from: Socket, to: Socket) => {
    let sending = Promise.resolve()
    from.on("data", (chunk: Buffer) => {
      sending = sending.then(async () => {
        for (let at = 0; at < chunk.length && !to.destroyed; at += pieceBytes) {
          to.write(chunk.subarray(at, at + pieceBytes))
          await new Promise((resolve) => setTimeout(resolve, 0))
        }
      })
    })
    from.on("close", () => to.destroy())
    from.on("error", () => undefined)
  }
  const server: Server = createServer((downstream) => {
    const upstream = createConnection({ host: "127.0.0.1", port })
    sockets.add(downstream).add(upstream)
    downstream.setNoDelay(true)
    upstream.setNoDelay(true)
    relay(downstream, upstream)
    relay(upstream, downstream)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const cut = () => {
    for (const socket of sockets) socket.destroy()
    sockets.clear()
  }
  cleanups.push(async () => {
    cut()
    await new Promise((resolve) => server.close(resolve))
  })
  const address = server.address()
  return { url: `redis://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`, cut }
}

describe("RESP replies read from a stream", () => {
  // Every kind of reply, a multi-byte character included, one after another.
  const frames = [
    "+OK\r\n",
    "-NOSCRIPT No matching script. Please use EVAL.\r\n",
    ":-42\r\n",
    "$-1\r\n",
    "$0\r\n\r\n",
    `$${Buffer.byteLength("a\r\nhé€")}\r\na\r\nhé€\r\n`,
    "*-1\r\n",
    "*0\r\n",
    "*4\r\n$1\r\na\r\n:7\r\n*2\r\n$-1\r\n+x\r\n-ERR inner\r\n"
  ]
  const expected: ReadonlyArray<Reply> = [
    "OK",
    new RedisReplyError({ code: "NOSCRIPT", message: "NOSCRIPT No matching script. Please use EVAL." }),
    -42,
    null,
    "",
    "a\r\nhé€",
    null,
    [],
    ["a", 7, [null, "x"], new RedisReplyError({ code: "ERR", message: "ERR inner" })]
  ]
  const bytes = Buffer.from(frames.join(""))

  const readAll = (chunks: ReadonlyArray<Buffer>) => {
    const replies: Array<Reply> = []
    const read = replyReader((reply) => replies.push(reply))
    for (const chunk of chunks) read(chunk)
    return replies
  }

  it("reads the same replies whatever the split: whole, at every byte, and one byte at a time", () => {
    expect(readAll([bytes])).toEqual(expected)
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(readAll([bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual(expected)
    }
    expect(readAll([...bytes].map((byte) => Buffer.from([byte])))).toEqual(expected)
  })

  it("hands a reply on only once it is whole", () => {
    const replies: Array<Reply> = []
    const read = replyReader((reply) => replies.push(reply))
    read(Buffer.from("$10\r\n01234"))
    read(Buffer.from("56789\r"))
    expect(replies).toEqual([])
    read(Buffer.from("\n:1"))
    expect(replies).toEqual(["0123456789"])
    read(Buffer.from("\r\n"))
    expect(replies).toEqual(["0123456789", 1])
  })

  it("refuses bytes that are not RESP2", () => {
    for (const garbage of ["?what\r\n", "$abc\r\n", "$3\r\nabcd\r\n", `$${2 ** 30}\r\n`, ":1.5\r\n"]) {
      expect(() => readAll([Buffer.from(garbage)])).toThrow(RedisProtocolError)
    }
    expect(() => readAll([Buffer.alloc(70_000, 0x2b)])).toThrow(RedisProtocolError)
  })

  it("encodes a command as an array of bulk strings, lengths in bytes", () => {
    expect(encodeCommand(["SET", "k", "é", 12])).toBe("*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\né\r\n$2\r\n12\r\n")
  })
})

describe("the client on a real redis-server", () => {
  it("reads replies that arrive split across many TCP reads, in order", async () => {
    const server = await startServer()
    const client = await clientOf((await splittingProxy(server.port, 3)).url)
    const value = "wallet ✓ €".repeat(20)
    expect(await client.call("SET", "k", value)).toBe("OK")
    expect(await client.call("GET", "k")).toBe(value)
    expect(await client.call("HSET", "h", "a", "1", "b", value)).toBe(2)
    const fields = (await client.call("HGETALL", "h")) as Array<string>
    // A hash this large is no longer a listpack: Redis gives its fields in no set order.
    expect(
      Object.fromEntries(Array.from({ length: fields.length / 2 }, (_, k) => [fields[2 * k], fields[2 * k + 1]]))
    ).toEqual({
      a: "1",
      b: value
    })
    const echoes = Array.from({ length: 50 }, (_, i) => `echo-${i}`)
    expect(await Promise.all(echoes.map((echo) => client.call("ECHO", echo)))).toEqual(echoes)
  })

  it("reads a bulk reply of more than 1 MiB, and a list of them", async () => {
    const server = await startServer()
    const client = await clientOf(server.url)
    const big = `${"é".repeat(600_000)}end`
    expect(Buffer.byteLength(big)).toBeGreaterThan(1024 * 1024)
    await client.call("SET", "big", big)
    expect(await client.call("GET", "big")).toBe(big)
    await client.call("RPUSH", "list", big, "small", big)
    expect(await client.call("LRANGE", "list", 0, -1)).toEqual([big, "small", big])
  })

  it("answers 200 concurrent pipelined commands each with its own reply", async () => {
    const server = await startServer()
    for (const url of [server.url, (await splittingProxy(server.port, 16)).url]) {
      const client = await clientOf(url)
      const calls = Array.from({ length: 200 }, (_, i) =>
        i % 2 === 0
          ? client.call("SET", `p:${i}`, `value-${i}`).then(() => client.call("GET", `p:${i}`))
          : client.call("ECHO", `echo-${i}`)
      )
      expect(await Promise.all(calls)).toEqual(
        Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? `value-${i}` : `echo-${i}`))
      )
    }
  })

  it("fails a call with Redis's error reply, typed, and goes on serving", async () => {
    const server = await startServer()
    const client = await clientOf(server.url)
    await client.call("SET", "s", "text")
    const error = await client.call("HGET", "s", "f").catch((failure: unknown) => failure)
    expect(error).toBeInstanceOf(RedisReplyError)
    expect(error).toMatchObject({ _tag: "RedisReplyError", code: "WRONGTYPE" })
    expect(await client.call("GET", "s")).toBe("text")
  })

  it("fails calls at once while Redis is away, and is connected again within about a second of its return", async () => {
    const server = await startServer()
    const client = await clientOf(server.url)
    await server.crash()
    const started = performance.now()
    const failures = await Promise.all(
      Array.from({ length: 20 }, () =>
        client.call("PING").then(
          () => undefined,
          (error: unknown) => error
        )
      )
    )
    expect(performance.now() - started).toBeLessThan(500)
    for (const failure of failures) expect(failure).toMatchObject({ _tag: "RedisConnectionError" })
    // Keep Redis down long enough for the delay between attempts to reach its 1 s cap.
    await new Promise((resolve) => setTimeout(resolve, 1500))
    await server.restart()
    const back = performance.now()
    await eventually(
      "connected again",
      () =>
        client.call("PING").then(
          () => true,
          () => false
        ),
      5000
    )
    expect(performance.now() - back).toBeLessThan(2000)
  })
})

describe("RedisStores from a URL", () => {
  it("fails fast while Redis is killed under traffic, leaves no record half-written, and recovers", async () => {
    const server = await startServer()
    const proxy = await splittingProxy(server.port, 7)
    const { runtime } = storesWith({ url: proxy.url, commandTimeoutMs: 10_000 })
    const phones = Array.from({ length: 100 }, (_, i) => PhoneE164.make(`+1415555${String(1000 + i)}`))
    const issue = (phone: PhoneE164) =>
      OtpStore.use((store) => store.issue(phone, { codeHash: "ab", expiresAt: NOW + 60_000, resendAt: NOW + 1 }, NOW))
    const observer = await clientOf(server.url)
    expect(await answers(runtime)).toBe(true)

    // The connection is cut while 100 scripts are on their way, one of them part-sent: each ran whole or not at all.
    const traffic = Promise.all(phones.map((phone) => runtime.runPromise(Effect.result(issue(phone)))))
    await eventually("some scripts ran", async () => Number(await observer.call("DBSIZE")) > 2, 5000)
    proxy.cut()
    const outcomes = await traffic
    const written = await Promise.all(
      phones.map((phone) =>
        observer.call("HGETALL", `walletgate:{otp:${phone}}`).then((fields) => (fields as Array<string>).length)
      )
    )
    for (const length of written) expect([0, 8]).toContain(length)
    expect(written.filter((length) => length === 8).length).toBeGreaterThan(0)
    expect(outcomes.filter((outcome) => outcome._tag === "Failure").length).toBeGreaterThan(0)
    for (const [i, outcome] of outcomes.entries()) {
      // A call answered as issued was written; a call that failed may or may not have run, but never in part.
      if (outcome._tag === "Success") expect(written[i]).toBe(8)
      else expect(outcome.failure).toBeInstanceOf(StoreUnavailable)
    }

    await eventually("the stores answer again", () => answers(runtime))
    await server.crash()
    const started = performance.now()
    const failure = await runtime.runPromise(Effect.flip(probe))
    expect(failure).toBeInstanceOf(StoreUnavailable)
    expect(performance.now() - started).toBeLessThan(1000)
    await server.restart()
    await eventually("the stores answer after the restart", () => answers(runtime))
  })

  it("runs a script again after SCRIPT FLUSH (EVALSHA, then EVAL on NOSCRIPT)", async () => {
    const server = await startServer()
    const { runtime } = storesWith({ url: server.url })
    const observer = await clientOf(server.url)
    expect(await answers(runtime)).toBe(true)
    await observer.call("SCRIPT", "FLUSH")
    expect(await runtime.runPromise(probe)).toMatchObject({ allowed: true })
    const stats = String(await observer.call("INFO", "commandstats"))
    expect(stats).toMatch(/cmdstat_eval:calls=\d+/)
    expect(stats).toMatch(/cmdstat_evalsha:calls=\d+/)
  })

  it("authenticates with a user and password and uses the URL's database; a wrong password fails without showing it", async () => {
    const server = await startServer()
    const admin = await clientOf(server.url)
    await admin.call("ACL", "SETUSER", "gate", "on", ">right-horse-battery", "~*", "+@all")
    await admin.call("CONFIG", "SET", "requirepass", "default-secret-staple")

    const good = storesWith({ url: `redis://gate:right-horse-battery@127.0.0.1:${server.port}/3` })
    expect(await answers(good.runtime)).toBe(true)
    await admin.call("AUTH", "gate", "right-horse-battery")
    await admin.call("SELECT", 3)
    expect(await admin.call("KEYS", "walletgate:*")).toHaveLength(1)

    const wrong = storesWith({ url: `redis://:not-the-secret-4711@127.0.0.1:${server.port}`, connectTimeoutMs: 300 })
    expect(await wrong.runtime.runPromise(Effect.flip(probe))).toBeInstanceOf(StoreUnavailable)
    const logs = wrong.lines.join("\n")
    expect(logs).toContain("WRONGPASS")
    expect(logs).not.toContain("not-the-secret-4711")

    const invalid = (() => {
      try {
        RedisStores.layer({ url: "redis://:hidden-secret-99@127.0.0.1:notaport" })
      } catch (error) {
        return error
      }
    })()
    expect(invalid).toBeInstanceOf(RangeError)
    expect(String(invalid)).not.toContain("hidden-secret-99")
  })

  it("connects over TLS (rediss://) to a server whose certificate it is given, and refuses one it cannot verify", async () => {
    const dir = mkdtempSync(join(tmpdir(), "walletgate-tls-"))
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }))
    const certFile = join(dir, "cert.pem")
    const keyFile = join(dir, "key.pem")
    execFileSync(
      "openssl",
      [
        ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1"],
        ...["-keyout", keyFile, "-out", certFile, "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1"]
      ],
      { stdio: "ignore" }
    )
    const server = await startServer({ tls: { certFile, keyFile } })
    const url = `rediss://127.0.0.1:${server.tlsPort}`

    const trusted = storesWith({ url, tls: { ca: readFileSync(certFile) } })
    expect(await answers(trusted.runtime)).toBe(true)

    const untrusted = storesWith({ url, connectTimeoutMs: 300 })
    expect(await untrusted.runtime.runPromise(Effect.flip(probe))).toBeInstanceOf(StoreUnavailable)
    expect(untrusted.lines.join("\n")).toContain("certificate")
  })
})
