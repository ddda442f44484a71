import { combinedDecision, type RateDecision, type RateLimit, RateLimiter } from "@walletgate/core"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type Connection, luaScript } from "./connection"

// One hash per limited key, `{rate:<key>}`: s = start of the current window, c = events counted in it.
// It lives until its window ends. A refused event is not counted, as in RateLimiter.memory.
const consume = luaScript(`
local window = redis.call("HMGET", KEYS[1], "s", "c")
local count = 0
if window[1] == ARGV[2] then count = tonumber(window[2]) end
if count >= tonumber(ARGV[1]) then return {0, count} end
count = count + 1
redis.call("HSET", KEYS[1], "s", ARGV[2], "c", count)
redis.call("PEXPIRE", KEYS[1], ARGV[3])
return {1, count}
`)

const Reply = Schema.Tuple([Schema.Number, Schema.Number])

/**
 * `RateLimiter` on Redis: fixed windows, counted and decided by one script per key. The keys of one call are
 * sent together (in a cluster they may live on different nodes, so one script cannot take them all): one round
 * trip however many limits an event counts against.
 */
export const redisRateLimiter = (connection: Connection): RateLimiter["Service"] => {
  const consumeOne = ({ key, limit }: RateLimit, windowMs: number, now: number) => {
    const start = now - (now % windowMs)
    const end = start + windowMs
    // The lifetime is relative (PEXPIRE, not PEXPIREAT) so that a skew between this clock and Redis's
    // can never end a window early; the window's start in the record decides which window it is.
    return connection
      .run(
        "RateLimiter.consume",
        consume,
        [`${connection.keyPrefix}{rate:${key}}`],
        [limit, start, Math.ceil(end - now)],
        Reply
      )
      .pipe(
        Effect.map(
          ([allowed, count]): RateDecision =>
            allowed === 1 ? { allowed: true, remaining: limit - count } : { allowed: false, retryAfterMs: end - now }
        )
      )
  }
  return RateLimiter.of({
    consume: (limits, windowMs, now) =>
      limits.length === 1
        ? consumeOne(limits[0], windowMs, now)
        : Effect.map(
            Effect.forEach(limits, (limit) => consumeOne(limit, windowMs, now), { concurrency: "unbounded" }),
            combinedDecision
          )
  })
}
