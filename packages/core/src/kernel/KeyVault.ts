import { hkdfSync } from "node:crypto"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { LocalAccount } from "viem"
import { privateKeyToAccount } from "viem/accounts"

// The order of secp256k1's group: a private key must be in [1, n).
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n

/** The owner keys of the accounts the service operates (users' wallets, automation accounts). */
export class KeyVault extends Context.Service<
  KeyVault,
  {
    /** The owner of the account identified by `accountKey` (a userId, or an automation account's id). */
    readonly owner: (accountKey: string) => Effect.Effect<LocalAccount>
  }
>()("@walletgate/core/KeyVault") {
  /**
   * Owner keys derived from one master secret with HKDF-SHA256 over the account key. Nothing per user is
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
        owner: (accountKey) => Effect.sync(() => privateKeyToAccount(deriveOwnerKey(masterSecret, accountKey)))
      })
    )
  }
}

/** HKDF-SHA256(master, salt, info = account key, counter), retried in the negligible case of an invalid scalar. */
export const deriveOwnerKey = (masterSecret: string, accountKey: string): `0x${string}` => {
  for (let counter = 0; ; counter++) {
    const okm = Buffer.from(
      hkdfSync("sha256", masterSecret, "walletgate/kernel/owner/v1", `${accountKey}#${counter}`, 32)
    )
    const scalar = BigInt(`0x${okm.toString("hex")}`)
    if (scalar > 0n && scalar < SECP256K1_N) return `0x${okm.toString("hex")}`
  }
}
