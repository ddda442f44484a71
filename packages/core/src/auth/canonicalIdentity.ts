import * as Effect from "effect/Effect"
import { NonCanonicalUserId } from "./errors"
import type { IdentityProvider } from "./IdentityProviders"
import { compactPhone, type InvalidPhone, parsePhone } from "./phone"

/** A walletgate user id (the `sub` of verifyOTP's token, the `<user_id>` of `phone:`): a lower-case version-4 UUID. */
export const USER_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

// Characters that show nothing or reorder what is shown (zero-width spaces and joiners, bidi marks, embeddings,
// overrides and isolates, BOM, soft hyphen: \p{Cf}), controls, line and paragraph separators, private-use,
// unassigned and lone surrogate code points: two ids that look alike must not name two wallets.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}\p{Zl}\p{Zp}]/u

/**
 * Why an id of any kind but `tel:` is refused before its kind's own rule: it holds invisible or control characters,
 * or white space (which no id of those kinds holds, and which the `userId` shape leaves to this check).
 */
const unseen = (id: string): string | undefined =>
  INVISIBLE.test(id) ? "it holds invisible or control characters" : /\s/u.test(id) ? "it holds white space" : undefined

const refuse = (provider: string, reason: string, canonical?: string) =>
  Effect.fail(new NonCanonicalUserId({ provider, reason, ...(canonical === undefined ? {} : { canonical }) }))

/** The E.164 number of a `tel:` id, if it is one sign-in accepts (a test number, or one its rules take). */
const telNumber = (
  provider: Extract<IdentityProvider, { kind: "tel" }>,
  id: string
): Effect.Effect<string, InvalidPhone> => {
  const compact = compactPhone(id)
  return provider.testPhones.has(compact) ? Effect.succeed(compact) : parsePhone(id, provider.regions)
}

/**
 * The canonical `tel:` id a refused spelling was evidently meant to be (compatibility forms folded; invisible
 * characters, white space and separators dropped; a missing `+` or `+1` added), if that names a number sign-in
 * accepts: the refusal names it.
 */
const meantTel = (provider: Extract<IdentityProvider, { kind: "tel" }>, id: string) => {
  const match = /^\+?1?(\d{10})$/.exec(id.normalize("NFKC").replace(/[\p{Cf}\s\-().]/gu, ""))
  if (match?.[1] === undefined) return Effect.succeed(undefined)
  return telNumber(provider, `+1${match[1]}`).pipe(
    Effect.map((number): string | undefined => `${provider.name}:${number}`),
    Effect.orElseSucceed(() => undefined)
  )
}

// What a `tel:` id may hold: `+`, ASCII digits and RFC 3966's visual separators (§5.1.1), which sign-in drops too.
const TEL_CHARACTERS = /^[+0-9\-().]+$/

/** A `tel:` id as E.164: only {@link TEL_CHARACTERS}, of a number sign-in accepts. */
const canonicalTel = (provider: Extract<IdentityProvider, { kind: "tel" }>, id: string) =>
  telNumber(provider, TEL_CHARACTERS.test(id) ? id : "").pipe(
    Effect.catchTag("InvalidPhone", (error) =>
      Effect.flatMap(meantTel(provider, id), (canonical) =>
        refuse(
          provider.name,
          TEL_CHARACTERS.test(id)
            ? `expected an E.164 number phone sign-in accepts (${error.reason})`
            : "expected E.164: +1 and 10 digits, with no other character than -, ., ( and )",
          canonical
        )
      )
    )
  )

/**
 * The canonical form of `id` at `provider`, or {@link NonCanonicalUserId}: one rule for every way an id becomes a
 * wallet (the `userId` of `tx`, `sign` and `resolver`, and the subject of the provider's token), so that a proven
 * identity and its address always agree and no address is named for an id nobody can prove.
 *
 * - `tel:`: E.164, of a number phone sign-in accepts. RFC 3966's visual separators (`-`, `.`, `(`, `)`) are dropped,
 *   as sign-in drops them; any other spelling (no `+`, fullwidth or invisible characters, a number sign-in refuses)
 *   is refused, naming the E.164 form when it is clear.
 * - `phone:`: a walletgate user id, a version-4 UUID, in lower case (UUIDs are case-insensitive).
 * - an external provider: its declared Unicode normalisation and case, then its declared pattern.
 *
 * Every kind refuses invisible, control and bidirectional-formatting characters, and white space (`tel:` naming
 * the E.164 form it drops them from).
 */
export const canonicalId = (provider: IdentityProvider, id: string): Effect.Effect<string, NonCanonicalUserId> => {
  const name = provider.name
  if (provider.kind === "tel") return canonicalTel(provider, id)
  const unseenReason = unseen(id)
  if (unseenReason !== undefined) return refuse(name, unseenReason)
  if (provider.kind === "phone") {
    const lower = id.toLowerCase()
    return USER_ID_PATTERN.test(lower)
      ? Effect.succeed(lower)
      : refuse(name, "expected a walletgate user id (a version-4 UUID)")
  }
  const { unicode, pattern } = provider.canonical
  const normalised = id.normalize(unicode)
  // Lower-casing can undo a normalisation (a capital with a combining mark), so normalise again after it.
  const cased = provider.canonical.case === "lower" ? normalised.toLowerCase().normalize(unicode) : normalised
  if (cased === "") return refuse(name, "it is empty")
  if (pattern !== undefined && !pattern.test(cased)) return refuse(name, "it does not match the provider's form")
  return Effect.succeed(cased)
}

/**
 * The canonical form of a test user's `userId` (`test:<anything>`, or any id with blank `auth`): an app's own name
 * for a user nobody proves, so only the rule every kind shares applies (no invisible, control or bidirectional
 * characters, no white space), with Unicode NFC.
 */
export const canonicalTestUserId = (userId: string): Effect.Effect<string, NonCanonicalUserId> => {
  const reason = unseen(userId)
  return reason === undefined
    ? Effect.succeed(userId.normalize("NFC"))
    : refuse(userId.slice(0, Math.max(userId.indexOf(":"), 0)), reason)
}
