import { GasLedger, type GasReservation } from "@walletgate/core/state"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type Connection, luaScript } from "./connection"

// One hash per budget, `{gas:<scope>}:<name>`: s = start of the current window, u = gas reserved in it. The
// budgets of one call share `{gas:<scope>}`, so they live in one cluster slot and one script decides them all.
// ARGV: gas, window start, lifetime (ms), then one limit per key. Every budget is checked before any is
// counted (all or nothing); the reply is {1, 0} when reserved, else {0, index of the first without room}.
// Counts are written with HINCRBY (exact 64-bit integers); Lua's numbers are exact up to 2^53, the largest limit.
const reserve = luaScript(`
local gas = tonumber(ARGV[1])
local fresh = {}
for i, key in ipairs(KEYS) do
  local window = redis.call("HMGET", key, "s", "u")
  local used = 0
  if window[1] == ARGV[2] then used = tonumber(window[2]) else fresh[i] = true end
  if used + gas > tonumber(ARGV[3 + i]) then return {0, i} end
end
for i, key in ipairs(KEYS) do
  if fresh[i] then redis.call("HSET", key, "s", ARGV[2], "u", 0) end
  redis.call("HINCRBY", key, "u", ARGV[1])
  redis.call("PEXPIRE", key, ARGV[3])
end
return {1, 0}
`)

// The gas reserved in the window starting at ARGV[1], as a string (a count may not fit a Lua number's %.14g).
const used = luaScript(`
local window = redis.call("HMGET", KEYS[1], "s", "u")
if window[1] == ARGV[1] then return window[2] end
return "0"
`)

// Gives back ARGV[1] gas in every budget whose current window is the one starting at ARGV[2] (where it was
// reserved); an ended window is left alone (it expires), and no count goes below zero.
const release = luaScript(`
for _, key in ipairs(KEYS) do
  local window = redis.call("HMGET", key, "s", "u")
  if window[1] == ARGV[2] then
    local used = tonumber(window[2])
    local back = tonumber(ARGV[1])
    if back > used then back = used end
    redis.call("HINCRBY", key, "u", -back)
  end
end
return 1
`)

const ReserveReply = Schema.Tuple([Schema.Number, Schema.Number])

/**
 * `GasLedger` on Redis: fixed windows, every budget of a reservation checked and counted by one script on one
 * slot. Lifetimes are relative (`PEXPIRE`), so a clock skew between this process and Redis never ends a window
 * early; the window's start in the record decides which window it is.
 */
export const redisGasLedger = (connection: Connection): GasLedger["Service"] => {
  const keyOf = (scope: string, name: string) => `${connection.keyPrefix}{gas:${scope}}:${name}`
  return GasLedger.of({
    reserve: (scope, budgets, gas, windowMs, now) => {
      const start = now - (now % windowMs)
      const end = start + windowMs
      return connection
        .run(
          "GasLedger.reserve",
          reserve,
          budgets.map((budget) => keyOf(scope, budget.name)),
          [gas, start, Math.ceil(end - now), ...budgets.map((budget) => budget.limit)],
          ReserveReply
        )
        .pipe(
          Effect.map(
            ([ok, index]): GasReservation =>
              ok === 1
                ? { reserved: true }
                : { reserved: false, budget: budgets[index - 1]?.name ?? budgets[0].name, retryAfterMs: end - now }
          )
        )
    },
    release: (scope, names, gas, windowMs, at) =>
      names.length === 0
        ? Effect.void
        : connection
            .run(
              "GasLedger.release",
              release,
              names.map((name) => keyOf(scope, name)),
              [gas, at - (at % windowMs)],
              Schema.Number
            )
            .pipe(Effect.asVoid),
    used: (scope, name, windowMs, now) =>
      connection.run("GasLedger.used", used, [keyOf(scope, name)], [now - (now % windowMs)], Schema.NumberFromString)
  })
}
