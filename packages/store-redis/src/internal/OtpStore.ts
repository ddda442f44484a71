import { type ConsumeOutcome, type IssueOutcome, OtpStore, type PhoneE164 } from "@walletgate/core/otp"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type Connection, luaScript } from "./connection"

// One hash per phone, `{otp:<phone>}`: h = code HMAC (absent once void), e = expires at, r = resend at,
// f = failed attempts; while a new code is held beside a usable one: n = its HMAC, ne = its expiry, p = the resend
// time before it. It lives until max(e, r) of its latest code, the same span as OtpStore.memory keeps an entry.

// ARGV: hash, expires at, resend at, now, lifetime. Answers 0 (issued), -1 (held) or the ms left to wait.
const issue = luaScript(`
local now = tonumber(ARGV[4])
local code = redis.call("HMGET", KEYS[1], "h", "e", "r")
local resendAt = tonumber(code[3])
if resendAt and resendAt > now then return resendAt - now end
if code[1] and tonumber(code[2]) > now then
  redis.call("HSET", KEYS[1], "n", ARGV[1], "ne", ARGV[2], "r", ARGV[3], "p", code[3])
  if redis.call("PTTL", KEYS[1]) < tonumber(ARGV[5]) then redis.call("PEXPIRE", KEYS[1], ARGV[5]) end
  return -1
end
redis.call("DEL", KEYS[1])
redis.call("HSET", KEYS[1], "h", ARGV[1], "e", ARGV[2], "r", ARGV[3], "f", 0)
redis.call("PEXPIRE", KEYS[1], ARGV[5])
return 0
`)

const activate = luaScript(`
local held = redis.call("HMGET", KEYS[1], "n", "ne")
if held[1] ~= ARGV[1] then return 0 end
redis.call("HSET", KEYS[1], "h", held[1], "e", held[2], "f", 0)
redis.call("HDEL", KEYS[1], "n", "ne", "p")
return 1
`)

const withdraw = luaScript(`
local code = redis.call("HMGET", KEYS[1], "h", "n", "p")
if code[2] == ARGV[1] then
  redis.call("HSET", KEYS[1], "r", code[3])
  redis.call("HDEL", KEYS[1], "n", "ne", "p")
  return 1
end
if code[1] == ARGV[1] then return redis.call("DEL", KEYS[1]) end
return 0
`)

// Plain equality is safe here: the stored value is an HMAC under a key the caller does not know, so
// where a wrong candidate's HMAC first differs tells nothing about the code.
const consume = luaScript(`
local code = redis.call("HMGET", KEYS[1], "h", "e")
if not code[1] or tonumber(code[2]) <= tonumber(ARGV[2]) then return 0 end
if code[1] == ARGV[1] then
  redis.call("DEL", KEYS[1])
  return 1
end
if redis.call("HINCRBY", KEYS[1], "f", 1) >= tonumber(ARGV[3]) then redis.call("HDEL", KEYS[1], "h") end
return 0
`)

const ISSUED: IssueOutcome = { _tag: "Issued" }
const HELD: IssueOutcome = { _tag: "Held" }

/** `OtpStore` on Redis: each operation is one script on the phone's key. */
export const redisOtpStore = (connection: Connection): OtpStore["Service"] => {
  const key = (phone: PhoneE164) => `${connection.keyPrefix}{otp:${phone}}`
  return OtpStore.of({
    issue: (phone, code, now) =>
      connection
        .run(
          "OtpStore.issue",
          issue,
          [key(phone)],
          // A record already past both instants gets a non-positive lifetime: PEXPIRE then deletes it.
          [code.codeHash, code.expiresAt, code.resendAt, now, Math.ceil(Math.max(code.expiresAt, code.resendAt) - now)],
          Schema.Number
        )
        .pipe(
          Effect.map(
            (wait): IssueOutcome =>
              wait === 0 ? ISSUED : wait < 0 ? HELD : { _tag: "ResendTooSoon", retryAfterMs: wait }
          )
        ),
    activate: (phone, codeHash) =>
      connection.run("OtpStore.activate", activate, [key(phone)], [codeHash], Schema.Number).pipe(Effect.asVoid),
    withdraw: (phone, codeHash) =>
      connection.run("OtpStore.withdraw", withdraw, [key(phone)], [codeHash], Schema.Number).pipe(Effect.asVoid),
    consume: (phone, candidateHash, now, maxAttempts) =>
      connection
        .run("OtpStore.consume", consume, [key(phone)], [candidateHash, now, maxAttempts], Schema.Number)
        .pipe(Effect.map((accepted): ConsumeOutcome => (accepted === 1 ? "Accepted" : "Rejected")))
  })
}
