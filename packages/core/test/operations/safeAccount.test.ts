import { concat, keccak256, recoverAddress, toHex } from "viem"
import { generatePrivateKey, privateKeyToAccount, privateKeyToAddress } from "viem/accounts"
import { describe, expect, it } from "vitest"
import { canonicalSafe4337, creationCode } from "../../src/deploy/contractPackages"
import { canonicalSafe4337Contracts, safeAccount, safeProxyCreationCode } from "../../src/operations/safeAccount"
import { nonceOfKey, randomNonceKey } from "../../src/operations/safeOperation"
import { safeOperationStubSignature, signSafeOperation, stubEcdsa } from "../../src/operations/safeSignature"

const owners = [0, 1, 2].map(() => privateKeyToAccount(generatePrivateKey()))

describe("safeAccount", () => {
  it("gives one address per owner set and threshold, whatever the owners' order", () => {
    const [a, b, c] = owners.map((owner) => owner.address) as [`0x${string}`, `0x${string}`, `0x${string}`]
    const one = safeAccount({ owners: [a, b], threshold: 1 })
    expect(safeAccount({ owners: [b, a], threshold: 1 }).address).toBe(one.address)
    expect(safeAccount({ owners: [a, b], threshold: 2 }).address).not.toBe(one.address)
    expect(safeAccount({ owners: [a, b, c], threshold: 1 }).address).not.toBe(one.address)
    expect(safeAccount({ owners: [a, b], threshold: 1, saltNonce: 1n }).address).not.toBe(one.address)
    expect(safeAccount({ owners: [a], threshold: 1 }).address).not.toBe(
      safeAccount({ owners: [b], threshold: 1 }).address
    )
    expect(one.owners).toEqual([a, b].sort((x, y) => (BigInt(x) < BigInt(y) ? -1 : 1)))
    expect(one.factory).toBe(canonicalSafe4337().safeProxyFactory.address)
  })

  it("refuses owner sets and thresholds that would make a broken Safe", () => {
    const a = owners[0]?.address ?? "0x"
    expect(() => safeAccount({ owners: [], threshold: 1 })).toThrow(/owners/)
    expect(() => safeAccount({ owners: [a, a.toLowerCase() as `0x${string}`], threshold: 1 })).toThrow(/distinct/)
    expect(() => safeAccount({ owners: ["0x0000000000000000000000000000000000000000"], threshold: 1 })).toThrow(
      "a Safe needs distinct, non-zero owners"
    )
    expect(() => safeAccount({ owners: [a], threshold: 0 })).toThrow(/threshold/)
    expect(() => safeAccount({ owners: [a], threshold: 2 })).toThrow(/threshold/)
  })

  it("has the canonical addresses the Safe registries publish, and SafeProxy's creation code of the package", () => {
    const registries = canonicalSafe4337()
    expect(canonicalSafe4337Contracts()).toEqual({
      entryPoint: registries.entryPoint.address,
      safeSingleton: registries.safeL2.address,
      safeProxyFactory: registries.safeProxyFactory.address,
      safeModuleSetup: registries.safeModuleSetup.address,
      safe4337Module: registries.safe4337Module.address,
      multiSendCallOnly: registries.multiSendCallOnly.address
    })
    expect(safeProxyCreationCode).toBe(creationCode("SafeProxy"))
    expect(canonicalSafe4337Contracts()).toEqual({
      entryPoint: "0x0000000071727De22E5E9d8BAf0edAc6f37da032",
      safeSingleton: "0x29fcB43b46531BcA003ddC8FCB67FFE91900C762",
      safeProxyFactory: "0x4e1DCf7AD4e460CfD30791CCC4F9c8a4f820ec67",
      safeModuleSetup: "0x2dd68b007B46fBe91B9A7c3EDa5A7a1063cB5b47",
      safe4337Module: "0x75cf11467937ce3F2f357CE24ffc3DBF8fD5c226",
      multiSendCallOnly: "0x9641d764fc13c8B624c04430C7356C1C7C8102e2"
    })
  })

  it("signs only with distinct owners, at least the threshold of them, in ascending address order", async () => {
    const [x, y, z] = owners as [(typeof owners)[0], (typeof owners)[0], (typeof owners)[0]]
    const safe = safeAccount({ owners: [x.address, y.address], threshold: 2 })
    const op = {
      sender: safe.address,
      nonce: nonceOfKey(randomNonceKey()),
      callData: "0x",
      callGasLimit: 1n,
      verificationGasLimit: 1n,
      preVerificationGas: 1n,
      maxFeePerGas: 1n,
      maxPriorityFeePerGas: 1n
    } as const
    await expect(signSafeOperation(safe, op, { chainId: 1, signers: [x] })).rejects.toThrow(/2 signatures/)
    await expect(signSafeOperation(safe, op, { chainId: 1, signers: [x, z] })).rejects.toThrow(/owner/)
    await expect(signSafeOperation(safe, op, { chainId: 1, signers: [x, x] })).rejects.toThrow(/distinct/)
    const both = await signSafeOperation(safe, op, { chainId: 1, signers: [y, x] })
    expect(await signSafeOperation(safe, op, { chainId: 1, signers: [x, y] })).toBe(both)
    // 6 + 6 bytes of validity, then two 65-byte signatures.
    expect((both.length - 2) / 2).toBe(12 + 2 * 65)
    expect(safeOperationStubSignature(safe)).toBe(concat(["0x000000000000000000000000", stubEcdsa, stubEcdsa]))
  })

  it("uses a well-formed stub signature that anyone can re-derive", async () => {
    const hash = keccak256(toHex("walletgate stub signature"))
    const throwaway = keccak256(toHex("walletgate stub key"))
    expect(await recoverAddress({ hash, signature: stubEcdsa })).toBe(privateKeyToAddress(throwaway))
    expect(await privateKeyToAccount(throwaway).sign({ hash })).toBe(stubEcdsa)
  })

  it("makes 192-bit nonce keys whose first nonce is the key shifted past the 64-bit sequence", () => {
    const keys = new Set(Array.from({ length: 100 }, randomNonceKey))
    expect(keys.size).toBe(100)
    for (const key of keys) expect(key < 1n << 192n).toBe(true)
    expect(nonceOfKey(5n)).toBe(5n << 64n)
    expect(nonceOfKey(5n, 2n)).toBe((5n << 64n) + 2n)
    expect(() => nonceOfKey(1n << 192n)).toThrow("nonce out of range")
    expect(() => nonceOfKey(1n, 1n << 64n)).toThrow("nonce out of range")
  })
})
