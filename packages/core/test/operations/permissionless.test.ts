import * as Effect from "effect/Effect"
import { toSafeSmartAccount } from "permissionless/accounts"
import { hashMessage, http, type LocalAccount } from "viem"
import {
  createBundlerClient,
  entryPoint07Abi,
  entryPoint07Address,
  toPackedUserOperation
} from "viem/account-abstraction"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { beforeAll, describe, expect, it } from "vitest"
import { Bundler, makeJsonRpcBundler } from "../../src/operations/Bundler"
import { canonicalSafe4337Contracts, safeAccount, safeBatchCallData } from "../../src/operations/safeAccount"
import { prepareSafeOperation, readAccountChainState } from "../../src/operations/safeOperation"
import { signSafeHash } from "../../src/operations/safeSignature"
import { type DevnetToken, deployDevnetToken, freshAddress, type SharedDevnet, sharedDevnet } from "../devnet/shared"

// walletgate's Safe account beside permissionless's `toSafeSmartAccount` (the ecosystem's implementation of the same
// account), on the devnet: permissionless computes the address from the factory's `proxyCreationCode`, read on chain.

let devnet: SharedDevnet
let bundler: Bundler["Service"]
let token: DevnetToken

const contracts = canonicalSafe4337Contracts()

/**
 * permissionless's Safe with walletgate's choices: Safe 1.4.1 on EntryPoint v0.7 with the same module, SafeL2 as the
 * singleton (permissionless's default is the non-L2 Safe) and `enableModules` called directly from `setup`
 * (permissionless's default wraps it in a MultiSend delegatecall).
 */
const theirSafe = (owner: LocalAccount, saltNonce: bigint, options: { readonly defaults?: boolean } = {}) =>
  toSafeSmartAccount({
    client: devnet.publicClient,
    owners: [owner],
    version: "1.4.1",
    entryPoint: { address: entryPoint07Address, version: "0.7" },
    saltNonce,
    ...(options.defaults === true
      ? {}
      : {
          safeSingletonAddress: contracts.safeSingleton,
          safe4337ModuleAddress: contracts.safe4337Module,
          safeModuleSetupAddress: contracts.safeModuleSetup,
          safeProxyFactoryAddress: contracts.safeProxyFactory,
          multiSendCallOnlyAddress: contracts.multiSendCallOnly,
          useMultiSendForSetup: false
        })
  })

/** A new owner key and a salt nobody used: a Safe that is not deployed and holds nothing. */
const newOwner = () => ({
  owner: privateKeyToAccount(generatePrivateKey()),
  saltNonce: BigInt(`0x${Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString("hex")}`)
})

const run = <A, E>(effect: Effect.Effect<A, E, Bundler>): Promise<A> =>
  Effect.runPromise(Effect.provideService(effect, Bundler, bundler))

describe("walletgate's Safe account beside permissionless's", { tags: ["devnet"] }, () => {
  beforeAll(async () => {
    devnet = await sharedDevnet()
    bundler = makeJsonRpcBundler([{ chainId: devnet.chain.id, url: devnet.bundlerUrl }])
    token = await deployDevnetToken(devnet, { name: "Compared", symbol: "CMP", decimals: 6 })
  })

  it("gives the same counterfactual address and factory call for the same owner and salt", async () => {
    const { owner, saltNonce } = newOwner()
    const ours = safeAccount({ owners: [owner.address], threshold: 1, saltNonce })
    const theirs = await theirSafe(owner, saltNonce)
    expect(await theirs.getAddress()).toBe(ours.address)
    expect(await theirs.getFactoryArgs()).toEqual({ factory: ours.factory, factoryData: ours.factoryData })
    // The salt is part of the address on both sides.
    expect(await (await theirSafe(owner, saltNonce + 1n)).getAddress()).toBe(
      safeAccount({ owners: [owner.address], threshold: 1, saltNonce: saltNonce + 1n }).address
    )
    expect(await (await theirSafe(owner, saltNonce + 1n)).getAddress()).not.toBe(ours.address)
    // permissionless's defaults (non-L2 singleton, setup through MultiSend) make another, equally valid Safe.
    expect(await (await theirSafe(owner, saltNonce, { defaults: true })).getAddress()).not.toBe(ours.address)
  })

  it("encodes one call and a batch into the same callData", async () => {
    const { owner, saltNonce } = newOwner()
    const ours = safeAccount({ owners: [owner.address], threshold: 1, saltNonce })
    const theirs = await theirSafe(owner, saltNonce)
    const one = [token.transferCall(freshAddress(), 1n)]
    const batch = [token.transferCall(freshAddress(), 1n), { to: freshAddress(), value: 5n, data: "0x" as const }]
    expect(await theirs.encodeCalls(one)).toBe(safeBatchCallData(ours, one))
    expect(await theirs.encodeCalls(batch)).toBe(safeBatchCallData(ours, batch))
  })

  it("signs a sponsored deploying operation byte for byte alike, and the Safe on chain accepts it", async () => {
    const { owner, saltNonce } = newOwner()
    const ours = safeAccount({ owners: [owner.address], threshold: 1, saltNonce })
    const theirs = await theirSafe(owner, saltNonce)
    await token.mint(ours.address, 10n)
    const recipient = freshAddress()
    const state = await readAccountChainState(devnet.publicClient, ours.address)
    const prepared = await run(
      prepareSafeOperation({
        chainId: devnet.chain.id,
        account: ours,
        calls: [token.transferCall(recipient, 3n)],
        deployed: state.deployed,
        fees: state.fees,
        signers: [owner],
        sponsor: {
          paymaster: devnet.deployment.contracts.verifyingPaymaster,
          signer: devnet.paymasterSigner,
          window: { validUntil: 0, validAfter: 0 }
        }
      })
    )
    const { signature: ourSignature, ...unsigned } = prepared.op
    // Both the initCode and the paymasterAndData are signed over: the operation has each.
    expect(unsigned).toMatchObject({ factory: ours.factory, paymaster: devnet.deployment.contracts.verifyingPaymaster })
    const theirSignature = await theirs.signUserOperation({ ...unsigned, signature: "0x", chainId: devnet.chain.id })
    expect(theirSignature).toBe(ourSignature)
    // The user operation hash is the EntryPoint's own, for the operation permissionless signed.
    const signedByThem = { ...unsigned, signature: theirSignature }
    expect(
      await devnet.publicClient.readContract({
        address: contracts.entryPoint,
        abi: entryPoint07Abi,
        functionName: "getUserOpHash",
        args: [toPackedUserOperation(signedByThem)]
      })
    ).toBe(prepared.hash)
    // Sent through walletgate's bundler client, permissionless's signature deploys the Safe and moves the tokens.
    const viemBundler = createBundlerClient({ client: devnet.publicClient, transport: http(devnet.bundlerUrl) })
    expect(
      await run(Bundler.use((b) => b.sendUserOperation(devnet.chain.id, signedByThem, contracts.entryPoint)))
    ).toBe(prepared.hash)
    const receipt = await viemBundler.waitForUserOperationReceipt({ hash: prepared.hash, pollingInterval: 50 })
    expect(receipt.success).toBe(true)
    expect(await token.balanceOf(recipient)).toBe(3n)
  })

  it("sends from a Safe that permissionless deployed, and each side's message signature verifies on chain", async () => {
    const { owner, saltNonce } = newOwner()
    const ours = safeAccount({ owners: [owner.address], threshold: 1, saltNonce })
    const theirs = await theirSafe(owner, saltNonce)
    // Before deployment both sides sign by ERC-6492 (the factory call wraps the ERC-1271 signature).
    const message = "walletgate and permissionless"
    const ourCounterfactual = await signSafeHash(ours, hashMessage(message), {
      chainId: devnet.chain.id,
      signers: [owner],
      state: "counterfactual"
    })
    const theirCounterfactual = await theirs.signMessage({ message })
    for (const signature of [ourCounterfactual, theirCounterfactual]) {
      expect(await devnet.publicClient.verifyMessage({ address: ours.address, message, signature })).toBe(true)
    }

    // permissionless deploys the Safe with a self-paid operation of its own (nonce, gas, stub, signature).
    await devnet.setBalance(ours.address, 10n ** 18n)
    await token.mint(ours.address, 10n)
    const viemBundler = createBundlerClient({
      account: theirs,
      client: devnet.publicClient,
      transport: http(devnet.bundlerUrl)
    })
    const first = freshAddress()
    const theirHash = await viemBundler.sendUserOperation({ calls: [token.transferCall(first, 4n)] })
    expect((await viemBundler.waitForUserOperationReceipt({ hash: theirHash, pollingInterval: 50 })).success).toBe(true)
    expect(await token.balanceOf(first)).toBe(4n)

    // walletgate sends from that Safe as from its own.
    const second = freshAddress()
    const state = await readAccountChainState(devnet.publicClient, ours.address)
    expect(state.deployed).toBe(true)
    const prepared = await run(
      prepareSafeOperation({
        chainId: devnet.chain.id,
        account: ours,
        calls: [token.transferCall(second, 6n)],
        deployed: state.deployed,
        fees: state.fees,
        signers: [owner]
      })
    )
    expect(await run(Bundler.use((b) => b.sendUserOperation(devnet.chain.id, prepared.op, contracts.entryPoint)))).toBe(
      prepared.hash
    )
    expect((await viemBundler.waitForUserOperationReceipt({ hash: prepared.hash, pollingInterval: 50 })).success).toBe(
      true
    )
    expect(await token.balanceOf(second)).toBe(6n)

    // Deployed, walletgate's bare ERC-1271 signature and permissionless's (eth_sign style, v + 4) both verify, and a
    // signature by another key does not.
    const ourDeployed = await signSafeHash(ours, hashMessage(message), {
      chainId: devnet.chain.id,
      signers: [owner],
      state: "deployed"
    })
    const theirDeployed = await theirs.signMessage({ message })
    expect(theirDeployed).not.toBe(ourDeployed)
    for (const signature of [ourDeployed, theirDeployed]) {
      expect(await devnet.publicClient.verifyMessage({ address: ours.address, message, signature })).toBe(true)
    }
    const stranger = privateKeyToAccount(generatePrivateKey())
    const forgedByUs = await signSafeHash({ ...ours, owners: [stranger.address] }, hashMessage(message), {
      chainId: devnet.chain.id,
      signers: [stranger],
      state: "deployed"
    })
    const forgedByThem = await (
      await toSafeSmartAccount({
        client: devnet.publicClient,
        owners: [stranger],
        version: "1.4.1",
        address: ours.address
      })
    ).signMessage({ message })
    for (const signature of [forgedByUs, forgedByThem]) {
      expect(await devnet.publicClient.verifyMessage({ address: ours.address, message, signature })).toBe(false)
    }
  })
})
