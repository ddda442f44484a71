import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * The source of randomness for everything security-relevant (codes, ids, key material). A port so that
 * tests can make codes predictable; production uses the platform CSPRNG.
 */
export class SecureRandom extends Context.Service<
  SecureRandom,
  {
    /** `length` bytes, uniformly random. */
    readonly bytes: (length: number) => Effect.Effect<Uint8Array>
  }
>()("@walletgate/core/SecureRandom") {
  /** The platform CSPRNG (`crypto.getRandomValues`). */
  static readonly crypto: Layer.Layer<SecureRandom> = Layer.succeed(
    SecureRandom,
    SecureRandom.of({ bytes: (length) => Effect.sync(() => crypto.getRandomValues(new Uint8Array(length))) })
  )
}

const UINT32_RANGE = 2 ** 32

/** A uniformly random string of `length` decimal digits (rejection sampling: no modulo bias). */
export const randomDigits = Effect.fnUntraced(function* (length: number) {
  const random = yield* SecureRandom
  const modulus = 10 ** length
  const ceiling = UINT32_RANGE - (UINT32_RANGE % modulus)
  while (true) {
    const bytes = yield* random.bytes(4)
    const value = new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0)
    if (value < ceiling) return String(value % modulus).padStart(length, "0")
  }
})

/** A random RFC 9562 version-4 UUID. */
export const randomUuid = Effect.gen(function* () {
  const random = yield* SecureRandom
  const bytes = yield* random.bytes(16)
  // RFC 9562 §5.4: version 4 in the high nibble of byte 6, variant 0b10 in the top bits of byte 8.
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
})
