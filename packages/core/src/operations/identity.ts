import * as Schema from "effect/Schema"
import { type Hex, keccak256 } from "viem"

/**
 * Whose account: a user's wallet (a provider and the user's id there, proven by that provider), an
 * automation account (by name), or a test user of one test-mode app (blank `auth`). Each kind is its own
 * key domain: owner keys and CREATE2 salts are derived from {@link encodeAccountIdentity}, so no identity of
 * one kind can ever name an account of another.
 */
export const AccountIdentity = Schema.TaggedUnion({
  UserWallet: { provider: Schema.String, id: Schema.String },
  AutomationAccount: { name: Schema.String },
  TestUser: { app: Schema.String, id: Schema.String }
})
/** Whose account: a user's wallet, an automation account, or a test-mode app's test user. */
export type AccountIdentity = typeof AccountIdentity.Type

/** The wallet of the user `id` at the identity provider `provider`. */
export const userWalletIdentity = (provider: string, id: string): AccountIdentity => ({
  _tag: "UserWallet",
  provider,
  id
})

/** The automation account named `name` (its `accountKey`). */
export const automationIdentity = (name: string): AccountIdentity => ({ _tag: "AutomationAccount", name })

/** The test user `id` (the request's whole `userId`) of the test-mode app `app` (its client id). */
export const testUserIdentity = (app: string, id: string): AccountIdentity => ({ _tag: "TestUser", app, id })

/** The `userId` an identity answers to (`<provider>:<id>`, a test user's whole id, an automation account's name). */
export const userIdOf = (identity: AccountIdentity): string =>
  AccountIdentity.match(identity, {
    UserWallet: ({ provider, id }) => `${provider}:${id}`,
    AutomationAccount: ({ name }) => name,
    TestUser: ({ id }) => id
  })

/** The version tag that opens each domain's encoding: a new derivation gets a new tag, never a reused one. */
export const ACCOUNT_DOMAIN_TAGS = {
  UserWallet: "walletgate/wallet/v1",
  AutomationAccount: "walletgate/automation/v1",
  TestUser: "walletgate/test-user/v1"
} as const satisfies Record<AccountIdentity["_tag"], string>

// A lone surrogate has no UTF-8 form (TextEncoder writes U+FFFD for it), so two strings would encode alike.
const LONE_SURROGATE = /\p{Cs}/u
const utf8 = new TextEncoder()

/**
 * The identity as bytes: its domain tag, then each field in a fixed order, each as a 4-byte big-endian
 * length and its UTF-8. Framing every part by its length makes the encoding injective: two different
 * identities, of one domain or of two, never give the same bytes. Throws a `RangeError` for a string with
 * a lone surrogate (the edges refuse those first).
 */
export const encodeAccountIdentity = (identity: AccountIdentity): Uint8Array => {
  const parts = AccountIdentity.match(identity, {
    UserWallet: ({ provider, id }) => [ACCOUNT_DOMAIN_TAGS.UserWallet, provider, id],
    AutomationAccount: ({ name }) => [ACCOUNT_DOMAIN_TAGS.AutomationAccount, name],
    TestUser: ({ app, id }) => [ACCOUNT_DOMAIN_TAGS.TestUser, app, id]
  })
  const encoded = parts.map((part) => {
    if (LONE_SURROGATE.test(part)) throw new RangeError("account identity: a string is not well-formed Unicode")
    return utf8.encode(part)
  })
  const bytes = new Uint8Array(encoded.reduce((sum, part) => sum + 4 + part.byteLength, 0))
  const view = new DataView(bytes.buffer)
  let at = 0
  for (const part of encoded) {
    view.setUint32(at, part.byteLength)
    bytes.set(part, at + 4)
    at += 4 + part.byteLength
  }
  return bytes
}

/** The CREATE2 salt of the identity's account: keccak256 of its encoding, so one identity has one address. */
export const accountSalt = (identity: AccountIdentity): Hex => keccak256(encodeAccountIdentity(identity))
