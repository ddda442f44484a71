import { createHash, hkdfSync } from "node:crypto"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { LocalAccount } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { type AccountIdentity, encodeAccountIdentity } from "./identity"

// The order of secp256k1's group: a private key must be in [1, n).
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n

// HKDF's salt for owner keys. v2: the info became the domain-separated identity (v1 took a bare userId).
const OWNER_KEY_SALT = "walletgate/owner-key/v2"

/** The owner keys of the accounts the service operates (users' wallets, automation accounts, test users). */
export class KeyVault extends Context.Service<
  KeyVault,
  {
    /** The owner of the account of `identity`: one key per identity, and no two identities share one. */
    readonly owner: (identity: AccountIdentity) => Effect.Effect<LocalAccount>
  }
>()("@walletgate/core/KeyVault") {
  /**
   * Owner keys derived from one master secret with HKDF-SHA256 over the account's identity. Nothing per user is
   * stored, so nothing per user can be lost, but the master secret is every wallet at once: whoever
   * reads it controls every account, and losing it loses every account. Keep it in a secrets manager,
   * never in code; rotating it means moving every account's assets. A vault backed by an HSM or KMS
   * implements this port for production at scale.
   */
  static readonly derived = (masterSecret: string): Layer.Layer<KeyVault> => {
    if (new TextEncoder().encode(masterSecret).byteLength < 32) {
      throw new RangeError("KeyVault.derived: the master secret must be at least 32 bytes")
    }
    return Layer.succeed(
      KeyVault,
      KeyVault.of({
        owner: (identity) => Effect.sync(() => privateKeyToAccount(deriveOwnerKey(masterSecret, identity)))
      })
    )
  }
}

/**
 * HKDF-SHA256(master, salt, info = SHA-256 of the identity's encoding ‖ a 4-byte counter), retried with the
 * next counter in the negligible case of an invalid scalar. The encoding is hashed because HKDF's info is
 * limited to 1024 bytes in Node; the hash keeps its injectivity (SHA-256 is collision resistant).
 */
export const deriveOwnerKey = (masterSecret: string, identity: AccountIdentity): `0x${string}` => {
  const digest = createHash("sha256").update(encodeAccountIdentity(identity)).digest()
  for (let counter = 0; ; counter++) {
    const info = Buffer.alloc(digest.byteLength + 4)
    digest.copy(info)
    info.writeUInt32BE(counter, digest.byteLength)
    const okm = Buffer.from(hkdfSync("sha256", masterSecret, OWNER_KEY_SALT, info, 32))
    const scalar = BigInt(`0x${okm.toString("hex")}`)
    if (scalar > 0n && scalar < SECP256K1_N) return `0x${okm.toString("hex")}`
  }
}
