// RESP2, the Redis serialization protocol (https://redis.io/docs/latest/develop/reference/protocol-spec/): commands
// are sent as arrays of bulk strings; replies are parsed incrementally, since a reply may arrive split across any
// number of TCP reads and many replies may arrive in one.
import * as Schema from "effect/Schema"

/** Redis answered a command with an error reply (`-NOSCRIPT …`, `-WRONGPASS …`); `code` is its first word. */
export class RedisReplyError extends Schema.TaggedError<RedisReplyError>()("RedisReplyError", {
  code: Schema.String,
  message: Schema.String
}) {}

/** The bytes from Redis are not RESP2: the connection cannot be trusted any more and is closed. */
export class RedisProtocolError extends Schema.TaggedError<RedisProtocolError>()("RedisProtocolError", {
  message: Schema.String
}) {}

/** One reply: a bulk or simple string (UTF-8), an integer, nil, an error reply (inside an array), or an array. */
export type Reply = string | number | null | RedisReplyError | ReadonlyArray<Reply>

/** Encodes one command and its arguments as a RESP2 array of bulk strings. */
export const encodeCommand = (args: ReadonlyArray<string | number>): string => {
  let frame = `*${args.length}\r\n`
  for (const arg of args) {
    const text = String(arg)
    frame += `$${Buffer.byteLength(text)}\r\n${text}\r\n`
  }
  return frame
}

// Redis's own limit on a bulk string (proto-max-bulk-len) and a generous bound on a header line: past them the peer
// is not a Redis server, and buffering on would only let it take the memory.
const maxBulkBytes = 512 * 1024 * 1024
const maxLineBytes = 64 * 1024

/** Parsed one reply ending at `end`, or need at least `need` bytes in the buffer to go on. */
type Step = { readonly reply: Reply; readonly end: number } | { readonly need: number }

const replyError = (line: string): RedisReplyError => {
  const space = line.indexOf(" ")
  return new RedisReplyError({ code: space === -1 ? line : line.slice(0, space), message: line })
}

const lengthOf = (line: string, maximum: number): number => {
  const length = Number(line)
  if (!Number.isInteger(length) || length < -1 || length > maximum) {
    throw new RedisProtocolError({ message: `invalid length ${line.slice(0, 20)}` })
  }
  return length
}

const parseAt = (buffer: Buffer, start: number): Step => {
  if (start >= buffer.length) return { need: start + 1 }
  const lineEnd = buffer.indexOf("\r\n", start + 1)
  if (lineEnd === -1) {
    if (buffer.length - start > maxLineBytes) throw new RedisProtocolError({ message: "header line too long" })
    return { need: buffer.length + 1 }
  }
  const line = buffer.toString("utf8", start + 1, lineEnd)
  const next = lineEnd + 2
  switch (buffer[start]) {
    case 0x2b: // +
      return { reply: line, end: next }
    case 0x2d: // -
      return { reply: replyError(line), end: next }
    case 0x3a: {
      // :
      const integer = Number(line)
      if (!Number.isInteger(integer)) throw new RedisProtocolError({ message: "invalid integer reply" })
      return { reply: integer, end: next }
    }
    case 0x24: {
      // $
      const length = lengthOf(line, maxBulkBytes)
      if (length === -1) return { reply: null, end: next }
      const end = next + length
      if (buffer.length < end + 2) return { need: end + 2 }
      if (buffer[end] !== 0x0d || buffer[end + 1] !== 0x0a) {
        throw new RedisProtocolError({ message: "bulk string without CRLF" })
      }
      return { reply: buffer.toString("utf8", next, end), end: end + 2 }
    }
    case 0x2a: {
      // *
      const count = lengthOf(line, Number.MAX_SAFE_INTEGER)
      if (count === -1) return { reply: null, end: next }
      const items: Array<Reply> = []
      let at = next
      for (let i = 0; i < count; i++) {
        const step = parseAt(buffer, at)
        if (!("reply" in step)) return step
        items.push(step.reply)
        at = step.end
      }
      return { reply: items, end: at }
    }
    default:
      throw new RedisProtocolError({ message: `unexpected reply type byte ${buffer[start]}` })
  }
}

/**
 * Reads replies from a byte stream, in order, each handed to `onReply` once whole. Bytes are kept until a reply is
 * complete, and parsing is only retried once as many bytes as the reply is known to need have arrived, so a large
 * bulk string split across many reads is joined once. Throws {@link RedisProtocolError} on bytes that are not RESP2.
 */
export const replyReader = (onReply: (reply: Reply) => void): ((chunk: Buffer) => void) => {
  let chunks: Array<Buffer> = []
  let buffered = 0
  let need = 1
  return (chunk) => {
    chunks.push(chunk)
    buffered += chunk.length
    if (buffered < need) return
    const buffer = chunks.length === 1 ? chunk : Buffer.concat(chunks, buffered)
    let at = 0
    for (;;) {
      const step = parseAt(buffer, at)
      if (!("reply" in step)) {
        chunks = at === buffer.length ? [] : [buffer.subarray(at)]
        buffered = buffer.length - at
        need = step.need - at
        return
      }
      at = step.end
      onReply(step.reply)
    }
  }
}
