// `walletgate audit`: the operators' audit log of the gateway's store, newest first.
import type { AuditEntry } from "../operator/schemas"
import { fail, type HelpTexts, type Invocation, output, table, wholeOption } from "./common"
import { withOperator } from "./store"

/** The help of `walletgate audit`. */
export const auditHelp: HelpTexts = {
  audit: `walletgate audit: what operators changed (the CLI and the operator API), newest first: when, who, what, to
what. Never a secret.

usage:
  walletgate audit [--since <time>] [--limit <n>] [--json]
options:
  --since <time>   entries at or after this time: ISO 8601 (2025-01-31, 2025-01-31T12:00:00Z) or a duration back
                   from now (90m, 24h, 7d)
  --limit <n>      at most n entries, 1 to 1000 (default 100)
  --json           [{ id, at, actor, action, target, requestId?, detail? }], at in ISO 8601
needs: REDIS_URL (the gateways' Redis) and WALLETGATE_REDIS_KEY_PREFIX when the gateways set one`
}

const UNITS: Readonly<Record<string, number>> = { m: 60_000, h: 3_600_000, d: 86_400_000 }

/** `--since` in epoch ms: an ISO 8601 time, or a duration back from now (`24h`); fails when it is neither. */
const sinceOption = (text: string): number => {
  const back = /^([0-9]{1,6})([mhd])$/.exec(text)
  if (back !== null) return Date.now() - Number(back[1]) * (UNITS[back[2] ?? ""] ?? 0)
  const at = /^[0-9]{4}-[0-9]{2}-[0-9]{2}/.test(text) ? Date.parse(text) : Number.NaN
  return Number.isNaN(at)
    ? fail("--since is an ISO 8601 time (2025-01-31T12:00:00Z) or a duration back from now (90m, 24h, 7d)")
    : at
}

const auditRows = (entries: ReadonlyArray<AuditEntry>) =>
  table(
    ["AT", "ACTOR", "ACTION", "TARGET", "DETAIL"],
    entries.map((entry) => [
      entry.at,
      entry.actor,
      entry.action,
      entry.target,
      Object.entries(entry.detail ?? {})
        .map(([name, value]) => `${name}=${value}`)
        .join(" ")
    ]),
    "no audit entries"
  )

/** Runs `walletgate audit`. */
export const runAudit = async (invocation: Invocation): Promise<void> => {
  const extra = invocation.positionals[1]
  if (extra !== undefined) fail(`unexpected argument "${extra.slice(0, 64)}" (walletgate audit --help)`)
  const since = invocation.values.since === undefined ? undefined : sinceOption(invocation.values.since)
  const limit = wholeOption(invocation, "limit", 1, 1000)
  const entries = await withOperator({}, (operator) =>
    operator.readAudit({
      ...(since === undefined ? {} : { since }),
      ...(limit === undefined ? {} : { limit })
    })
  )
  return output(invocation, entries, () => auditRows(entries))
}
