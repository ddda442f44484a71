// The Redis client the stores make from a URL: one connection, commands pipelined on it and answered in order, no
// offline queue (a call while disconnected fails at once), reconnection with a delay of at most 1 s.
import { isIP, type Socket, connect as tcpConnect } from "node:net"
import type { ConnectionOptions } from "node:tls"
import * as Schema from "effect/Schema"
import { encodeCommand, RedisProtocolError, RedisReplyError, type Reply, replyReader } from "./resp"

/**
 * What the stores need of a Redis client: to send one command and get its reply. ioredis's `Redis` and `Cluster`
 * have this shape (`call`), and so does the client made from a URL.
 */
export interface RedisClient {
  /** Sends `command` with `args`; resolves to the reply (strings, numbers, null, arrays), rejects on an error. */
  call(command: string, ...args: Array<string | number>): Promise<unknown>
}

/** The call was not sent, or its reply will never come: Redis is not connected, or the connection was lost. */
class RedisConnectionError extends Schema.TaggedError<RedisConnectionError>()("RedisConnectionError", {
  message: Schema.String
}) {}

/** Where and how to reach Redis, from a `redis://` or `rediss://` URL. */
export interface RedisAddress {
  readonly host: string
  readonly port: number
  readonly tls: boolean
  readonly username: string | undefined
  readonly password: string | undefined
  readonly db: number
}

/**
 * Reads `redis://[[user]:password@]host[:port][/db]` (or `rediss://` for TLS). Throws a `RangeError` that never
 * repeats the URL, since it may hold a password.
 */
export const parseRedisUrl = (url: string): RedisAddress => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new RangeError("RedisStores: url is not a valid URL (redis://[[user]:password@]host[:port][/db])")
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
    throw new RangeError("RedisStores: url must start with redis:// or rediss://")
  }
  const path = parsed.pathname.replace(/^\//, "")
  const db = path === "" ? 0 : Number(path)
  if (!Number.isInteger(db) || db < 0 || !/^\d*$/.test(path)) {
    throw new RangeError("RedisStores: the url's path must be a database index (/0, /1, …)")
  }
  const decode = (part: string) => (part === "" ? undefined : decodeURIComponent(part))
  return {
    // An IPv6 host comes bracketed from URL (`[::1]`); sockets want it bare.
    host: parsed.hostname.replace(/^\[(.*)\]$/, "$1") || "localhost",
    port: parsed.port === "" ? 6379 : Number(parsed.port),
    tls: parsed.protocol === "rediss:",
    username: decode(parsed.username),
    password: decode(parsed.password),
    db
  }
}

/** Settings of {@link openRedis}. */
export interface OpenSettings {
  readonly address: RedisAddress
  /** Extra options of the TLS connection for `rediss://` (for example `ca` for a private certificate authority). */
  readonly tls?: ConnectionOptions | undefined
  /** The longest wait for one connection attempt (TCP, TLS and the handshake), in ms. */
  readonly connectTimeoutMs: number
  /** Shown by `CLIENT LIST`. */
  readonly name: string
}

/** A client of {@link openRedis}. */
export interface OwnedRedis extends RedisClient {
  /** Resolves to true once connected, or to false after `ms` without a connection. */
  ready(ms: number): Promise<boolean>
  /** Sends `QUIT`, waits up to `ms` for its answer, then closes the connection for good. */
  quit(ms: number): Promise<void>
}

interface Waiting {
  readonly resolve: (reply: unknown) => void
  readonly reject: (error: unknown) => void
}

// Up to 1 s between reconnection attempts, so that a restarted Redis is found again within a second.
const reconnectDelay = (attempt: number): number => Math.min(attempt * 100, 1000)

/** Opens a connection to Redis now and keeps it open, reconnecting after any loss, until {@link OwnedRedis.quit}. */
export const openRedis = (settings: OpenSettings): OwnedRedis => {
  const { address } = settings
  let socket: Socket | undefined
  let ready = false
  let closed = false
  let attempt = 0
  let retry: ReturnType<typeof setTimeout> | undefined
  let lastFailure = "not connected yet"
  let waiting: Array<Waiting> = []
  const onReady = new Set<() => void>()

  const notConnected = () =>
    Promise.reject(new RedisConnectionError({ message: `Redis is not connected (${lastFailure})` }))

  const write = (on: Socket, args: ReadonlyArray<string | number>): Promise<unknown> =>
    new Promise((resolve, reject) => {
      waiting.push({ resolve, reject })
      // Commands written in one tick go out in one segment; their replies come back in the same order.
      if (on.writableCorked === 0) {
        on.cork()
        process.nextTick(() => on.uncork())
      }
      on.write(encodeCommand(args))
    })

  const settle = (reply: Reply) => {
    const next = waiting.shift()
    if (next === undefined) throw new RedisProtocolError({ message: "a reply that no command asked for" })
    if (reply instanceof RedisReplyError) next.reject(reply)
    else next.resolve(reply)
  }

  const lost = (on: Socket, why: string) => {
    if (socket !== on) return
    socket = undefined
    ready = false
    lastFailure = why
    const failed = waiting
    waiting = []
    for (const call of failed) call.reject(new RedisConnectionError({ message: `connection to Redis lost (${why})` }))
    if (!closed) {
      attempt += 1
      retry = setTimeout(open, reconnectDelay(attempt))
    }
  }

  // Pipelined: AUTH, SELECT and CLIENT SETNAME go out in one segment, and each reply is awaited (none is left unhandled).
  const handshake = async (on: Socket) => {
    const auth =
      address.password === undefined
        ? []
        : [address.username === undefined ? ["AUTH", address.password] : ["AUTH", address.username, address.password]]
    const commands = [
      ...auth,
      ...(address.db === 0 ? [] : [["SELECT", address.db]]),
      ["CLIENT", "SETNAME", settings.name]
    ]
    const replies = await Promise.allSettled(commands.map((command) => write(on, command)))
    const refused = replies.find((reply) => reply.status === "rejected")
    if (refused !== undefined) throw refused.reason
  }

  const open = () => {
    retry = undefined
    if (closed) return
    const options = { host: address.host, port: address.port }
    // node:tls is loaded only for rediss://: loading it takes tens of ms of a cold start that plain TCP does not need.
    const on: Socket = address.tls
      ? process
          .getBuiltinModule("node:tls")
          .connect({ ...options, ...(isIP(address.host) === 0 ? { servername: address.host } : {}), ...settings.tls })
      : tcpConnect(options)
    socket = on
    on.setNoDelay(true)
    on.setKeepAlive(true)
    on.setTimeout(settings.connectTimeoutMs, () =>
      on.destroy(new Error(`no connection within ${settings.connectTimeoutMs} ms`))
    )
    const read = replyReader(settle)
    on.on("data", (chunk: Buffer) => {
      try {
        read(chunk)
      } catch (error) {
        on.destroy(error instanceof Error ? error : new Error(String(error)))
      }
    })
    on.on("error", (error) => {
      lastFailure = error.message
    })
    on.on("close", () => lost(on, lastFailure))
    on.once(address.tls ? "secureConnect" : "connect", () => {
      handshake(on).then(
        () => {
          if (socket !== on) return
          on.setTimeout(0)
          ready = true
          attempt = 0
          for (const resume of onReady) resume()
        },
        (error: unknown) => {
          // Only the code of a refusal (WRONGPASS, NOAUTH): the message of a reply to AUTH is not ours to log.
          lastFailure = error instanceof RedisReplyError ? `handshake refused: ${error.code}` : "handshake failed"
          on.destroy()
        }
      )
    })
  }

  open()

  return {
    call: (command, ...args) => (ready && socket !== undefined ? write(socket, [command, ...args]) : notConnected()),
    ready: (ms) =>
      ready
        ? Promise.resolve(true)
        : new Promise((resolve) => {
            const done = (connected: boolean) => {
              clearTimeout(timer)
              onReady.delete(resume)
              resolve(connected)
            }
            const resume = () => done(true)
            const timer = setTimeout(() => done(false), ms)
            onReady.add(resume)
          }),
    quit: async (ms) => {
      closed = true
      if (retry !== undefined) clearTimeout(retry)
      const on = socket
      if (on === undefined) return
      if (ready) {
        let timer: ReturnType<typeof setTimeout> | undefined
        await Promise.race([
          write(on, ["QUIT"]).catch(() => undefined),
          new Promise((resolve) => {
            timer = setTimeout(resolve, ms)
          })
        ])
        clearTimeout(timer)
      }
      on.destroy()
    }
  }
}
