import {
  type AccountIdentity,
  accountSalt,
  automationIdentity,
  testUserIdentity,
  userWalletIdentity
} from "@walletgate/core/operations"
import fc from "fast-check"
import { privateKeyToAccount } from "viem/accounts"
import { describe, expect, it } from "vitest"
import { ACCOUNT_DOMAIN_TAGS, encodeAccountIdentity } from "../../src/operations/identity"
import { deriveOwnerKey } from "../../src/operations/KeyVault"

const MASTER = "identity-tests-master-secret-0123456789abcdef"

// Strings from a few characters that make naive joins collide (separators, NUL, what a length prefix looks like,
// the domains' own words), and any well-formed Unicode.
const tricky = fc.oneof(
  fc.string({
    unit: fc.constantFrom(
      ":",
      "#",
      "/",
      "\u0000",
      "\u0001",
      "a",
      "automation",
      "phone",
      "test",
      "walletgate/wallet/v1"
    ),
    maxLength: 6
  }),
  fc.string({ unit: "grapheme", maxLength: 12 })
)
const identity: fc.Arbitrary<AccountIdentity> = fc.oneof(
  fc.tuple(tricky, tricky).map(([provider, id]) => userWalletIdentity(provider, id)),
  tricky.map((name) => automationIdentity(name)),
  fc.tuple(tricky, tricky).map(([app, id]) => testUserIdentity(app, id))
)

/** The identity's parts in encoding order. */
const partsOf = (value: AccountIdentity): ReadonlyArray<string> => {
  switch (value._tag) {
    case "UserWallet":
      return [ACCOUNT_DOMAIN_TAGS.UserWallet, value.provider, value.id]
    case "AutomationAccount":
      return [ACCOUNT_DOMAIN_TAGS.AutomationAccount, value.name]
    case "TestUser":
      return [ACCOUNT_DOMAIN_TAGS.TestUser, value.app, value.id]
  }
}

/** Reads an encoding back into its parts: a left inverse of the encoding, which is therefore injective. */
const parse = (bytes: Uint8Array): ReadonlyArray<string> => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const parts: Array<string> = []
  for (let at = 0; at < bytes.byteLength; ) {
    const length = view.getUint32(at)
    parts.push(new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(at + 4, at + 4 + length)))
    at += 4 + length
  }
  return parts
}

const ownerOf = (value: AccountIdentity) => privateKeyToAccount(deriveOwnerKey(MASTER, value)).address
const same = (a: AccountIdentity, b: AccountIdentity) => JSON.stringify(partsOf(a)) === JSON.stringify(partsOf(b))

describe("account identities: domain-separated owner keys and salts", () => {
  it("encodes every identity as its domain tag and fields, each framed by its length", () => {
    fc.assert(
      fc.property(identity, (value) => {
        expect(parse(encodeAccountIdentity(value))).toEqual(partsOf(value))
      }),
      { numRuns: 500 }
    )
  })

  it("never gives two different identities, of one domain or two, the same owner key or salt", () => {
    fc.assert(
      fc.property(identity, identity, (a, b) => {
        fc.pre(!same(a, b))
        expect(accountSalt(a)).not.toBe(accountSalt(b))
        expect(deriveOwnerKey(MASTER, a)).not.toBe(deriveOwnerKey(MASTER, b))
      }),
      { numRuns: 300 }
    )
  })

  it("keeps apart the identities whose old keys were one string", () => {
    fc.assert(
      fc.property(tricky, tricky, tricky, (a, b, c) => {
        const collidedBefore: ReadonlyArray<readonly [AccountIdentity, AccountIdentity]> = [
          // `automation:<name>` as a userId was the automation account's key (finding 2).
          [userWalletIdentity("automation", `${a}`), automationIdentity(a)],
          // A field boundary moved: `a:b:c` split two ways.
          [userWalletIdentity(a, `${b}:${c}`), userWalletIdentity(`${a}:${b}`, c)],
          // Blank auth's test user of `a:b` and the real user `b` at `a`.
          [testUserIdentity(c, `${a}:${b}`), userWalletIdentity(a, b)],
          // One app's test user against another's.
          [testUserIdentity(a, `${b}`), testUserIdentity(`${a}x`, b)]
        ]
        for (const [one, other] of collidedBefore) {
          expect(accountSalt(one)).not.toBe(accountSalt(other))
          expect(ownerOf(one)).not.toBe(ownerOf(other))
        }
      }),
      { numRuns: 100 }
    )
  })

  it("derives the same key and salt for the same identity, pinned here so that a change cannot go unnoticed", () => {
    const alice = userWalletIdentity("phone", "5c0f0000-0000-4000-8000-000000000001")
    expect(deriveOwnerKey(MASTER, alice)).toBe(deriveOwnerKey(MASTER, { ...alice }))
    expect([ownerOf(alice), accountSalt(alice)]).toEqual(PINNED.user)
    expect([ownerOf(automationIdentity("demo")), accountSalt(automationIdentity("demo"))]).toEqual(PINNED.automation)
    // The encoding, spelled out: 4-byte length, "walletgate/automation/v1", 4-byte length, "demo".
    expect(Buffer.from(encodeAccountIdentity(automationIdentity("demo"))).toString("hex")).toBe(
      `00000018${Buffer.from("walletgate/automation/v1").toString("hex")}00000004${Buffer.from("demo").toString("hex")}`
    )
    const tester = testUserIdentity("wgc_demo", "phone:alice")
    expect([ownerOf(tester), accountSalt(tester)]).toEqual(PINNED.test)
  })

  it("refuses a string with a lone surrogate, which has no UTF-8 form of its own", () => {
    expect(() => encodeAccountIdentity(userWalletIdentity("phone", "a\ud800"))).toThrow(RangeError)
    expect(() => deriveOwnerKey(MASTER, automationIdentity("\udc00"))).toThrow(RangeError)
  })
})

// Owner address and salt of one identity per domain under MASTER: the derivation of walletgate/*/v1 and
// walletgate/owner-key/v2. A change here moves every wallet; it takes a new version tag, never an edit.
const PINNED = {
  user: [
    "0x2C3B772a79838165aDe610Ce624304056651ec5e",
    "0xb77fc5e9b1e9f34a97a8a0758f7117f07ec426e079562fdce1d04cbc74657409"
  ],
  automation: [
    "0x145bECFFaECC739Fc9951998543d597C03FEe9ed",
    "0xc2d3d0b892633329a4340f25626e6e76bea1ac63977bb8e70467f52aabce47bc"
  ],
  test: [
    "0x2cB0b328aec735b1f6Eff607E292812bdd7559fD",
    "0x3ea2c7ebe899af6f605aab7d0a69a25524c1a767b4d386af949cfb51d94ca8a4"
  ]
}
