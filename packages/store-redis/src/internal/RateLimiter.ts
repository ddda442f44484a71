import { type RateDecision, RateLimiter, sharedRateScope } from "@walletgate/core/state"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type Connection, luaScript } from "./connection"

// One hash per limited key, `{rate:<scope>}<rest of the key>`: s = start of the current window, c = events counted
// in it. It lives until its window ends. The keys of one scope share a hash slot, so one script decides a call:
// it counts the event against every key when all have room, else against none (as RateLimiter.memory does).
// ARGV holds three values per key: its limit, the start of its current window, and the ms until that window ends.
// The reply: 1 (counted) or 0 (refused), then each key's count (after counting, or as it stands when refused).
const consume = luaScript(`
local counts = {}
local room = 1
for i = 1, #KEYS do
  local window = redis.call("HMGET", KEYS[i], "s", "c")
  local count = 0
  if window[1] == ARGV[3 * i - 1] then count = tonumber(window[2]) end
  counts[i] = count
  if count >= tonumber(ARGV[3 * i - 2]) then room = 0 end
end
if room == 1 then
  for i = 1, #KEYS do
    counts[i] = counts[i] + 1
    redis.call("HSET", KEYS[i], "s", ARGV[3 * i - 1], "c", counts[i])
    redis.call("PEXPIRE", KEYS[i], ARGV[3 * i])
  end
end
return {room, unpack(counts)}
`)

const Reply = Schema.NonEmptyArray(Schema.Number)

/** `RateLimiter` on Redis: fixed windows, a call counted and decided by one script on its scope's slot. */
export const redisRateLimiter = (connection: Connection): RateLimiter["Service"] =>
  RateLimiter.of({
    consume: (limits, now) =>
      Effect.suspend(() => {
        const scope = sharedRateScope(limits)
        const keys: Array<string> = []
        const args: Array<number> = []
        const ends: Array<number> = []
        for (const { key, limit, windowMs } of limits) {
          const start = now - (now % windowMs)
          const end = start + windowMs
          keys.push(`${connection.keyPrefix}{rate:${scope}}${key.slice(scope.length)}`)
          // The lifetime is relative (PEXPIRE, not PEXPIREAT) so that a skew between this clock and Redis's
          // can never end a window early; the window's start in the record decides which window it is.
          args.push(limit, start, Math.ceil(end - now))
          ends.push(end)
        }
        return connection.run("RateLimiter.consume", consume, keys, args, Reply).pipe(
          Effect.map(([counted, ...counts]): RateDecision => {
            if (counted === 1) {
              let remaining = Number.POSITIVE_INFINITY
              for (const [i, { limit }] of limits.entries()) remaining = Math.min(remaining, limit - (counts[i] ?? 0))
              return { allowed: true, remaining }
            }
            let retryAfterMs = -1
            const refused: Array<string> = []
            for (const [i, { key, limit }] of limits.entries()) {
              if ((counts[i] ?? 0) >= limit) {
                retryAfterMs = Math.max(retryAfterMs, (ends[i] ?? now) - now)
                refused.push(key)
              }
            }
            return { allowed: false, retryAfterMs, refused }
          })
        )
      })
  })
