import { execFileSync } from "node:child_process"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import {
  type Address,
  createPublicClient,
  createWalletClient,
  decodeErrorResult,
  getAddress,
  type Hash,
  type Hex,
  hashMessage,
  hashTypedData,
  http,
  type LocalAccount,
  parseAbi,
  parseEther,
  parseEventLogs
} from "viem"
import { entryPoint07Abi, toPackedUserOperation, type UserOperationReceipt } from "viem/account-abstraction"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { beforeAll, describe, expect, it } from "vitest"
import { checkErc4337Code } from "../../src/deploy/codeChecks"
import { deployErc4337Contracts } from "../../src/deploy/deployment"
import { startAlto } from "../../src/devnet/alto"
import { Bundler, type BundlerError, makeJsonRpcBundler, type UserOperation07 } from "../../src/operations/Bundler"
import type { PaymasterServiceError } from "../../src/operations/paymasterService"
import { type SafeAccount, type SafeCall, safeAccount } from "../../src/operations/safeAccount"
import {
  type GasSource,
  type PreparedSafeOperation,
  prepareSafeOperation,
  readAccountChainState
} from "../../src/operations/safeOperation"
import { signSafeHash, signSafeOperation } from "../../src/operations/safeSignature"
import { simulateBatch } from "../../src/operations/simulation"
import { verifyingPaymasterHash } from "../../src/operations/verifyingPaymaster"
import { startRpcProxy } from "../devnet/rpcProxy"
import {
  type DevnetToken,
  deployDevnetToken,
  freshAddress,
  paymasterDeposit as paymasterDepositOf,
  type SharedDevnet,
  sharedDevnet
} from "../devnet/shared"

const tokenErrors = parseAbi(["error InsufficientBalance(address from, uint256 balance, uint256 needed)"])

/**
 * The revert data of an operation included but whose calls reverted, from the EntryPoint's
 * `UserOperationRevertReason` event in the bundle's transaction receipt (an operation's own `logs` leave it out).
 */
const operationRevertData = (receipt: UserOperationReceipt): Hex | undefined =>
  parseEventLogs({ abi: entryPoint07Abi, eventName: "UserOperationRevertReason", logs: receipt.receipt.logs }).find(
    (log) => log.args.userOpHash === receipt.userOpHash
  )?.args.revertReason

let devnet: SharedDevnet
let bundler: Bundler["Service"]
let token: DevnetToken

const run = <A>(effect: Effect.Effect<A, BundlerError | PaymasterServiceError, Bundler>): Promise<A> =>
  Effect.runPromise(Effect.provideService(effect, Bundler, bundler))

const runExit = <A>(effect: Effect.Effect<A, BundlerError | PaymasterServiceError, Bundler>) =>
  Effect.runPromiseExit(Effect.provideService(effect, Bundler, bundler))

const chainId = () => devnet.chain.id

const sponsor = () => ({
  paymaster: devnet.deployment.contracts.verifyingPaymaster,
  signer: devnet.paymasterSigner,
  window: { validUntil: 0, validAfter: 0 }
})

/** A new user: an owner key nobody else holds and its counterfactual Safe (no ETH, never deployed). */
const newUser = (): { readonly owner: LocalAccount; readonly safe: SafeAccount } => {
  const owner = privateKeyToAccount(generatePrivateKey())
  return { owner, safe: safeAccount({ owners: [owner.address], threshold: 1 }) }
}

const balanceOf = (address: Address) => token.balanceOf(address)

const mint = (to: Address, amount: bigint) => token.mint(to, amount)

const prepare = async (
  user: { readonly owner: LocalAccount; readonly safe: SafeAccount },
  calls: ReadonlyArray<SafeCall>,
  options: { readonly gas?: GasSource; readonly signers?: ReadonlyArray<LocalAccount> } = {}
): Promise<PreparedSafeOperation> => {
  const state = await readAccountChainState(devnet.publicClient, user.safe.address)
  return run(
    prepareSafeOperation({
      chainId: chainId(),
      account: user.safe,
      calls,
      deployed: state.deployed,
      fees: state.fees,
      signers: options.signers ?? [user.owner],
      sponsor: sponsor(),
      ...(options.gas === undefined ? {} : { gas: options.gas })
    })
  )
}

const send = (op: UserOperation07) =>
  run(Bundler.use((b) => b.sendUserOperation(chainId(), op, devnet.deployment.contracts.entryPoint)))

/** Polls the bundler for the operation's receipt (20 ms apart, 20 s at most). */
const receiptOf = async (hash: Hash): Promise<UserOperationReceipt> => {
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const receipt = await run(Bundler.use((b) => b.getUserOperationReceipt(chainId(), hash)))
    if (receipt !== undefined) return receipt
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error(`no receipt for ${hash}`)
}

const sendAndWait = async (prepared: PreparedSafeOperation): Promise<UserOperationReceipt> => {
  expect(await send(prepared.op)).toBe(prepared.hash)
  return receiptOf(prepared.hash)
}

/** A user whose Safe is deployed (by a sponsored one-call operation) and holds `tokens`. */
const deployedUser = async (tokens: bigint) => {
  const user = newUser()
  await mint(user.safe.address, tokens)
  const receipt = await sendAndWait(await prepare(user, [token.transferCall(freshAddress(), 1n)]))
  expect(receipt.success).toBe(true)
  return user
}

const paymasterDeposit = () => paymasterDepositOf(devnet)

describe("ERC-4337 on a devnet (anvil + alto)", { tags: ["devnet"] }, () => {
  beforeAll(async () => {
    devnet = await sharedDevnet()
    bundler = makeJsonRpcBundler([{ chainId: devnet.chain.id, url: devnet.bundlerUrl }])
    token = await deployDevnetToken(devnet, { name: "Test", symbol: "TST", decimals: 18 })
    console.log(`alto answered eth_supportedEntryPoints ${devnet.alto.startupMs} ms after its start`)
  })

  it("deploys every contract at its canonical address with the canonical code, and a second run sends nothing", async () => {
    const checks = await checkErc4337Code(devnet.publicClient)
    expect(checks.map((check) => check.contract)).toEqual([
      "EntryPoint",
      "Safe",
      "SafeL2",
      "SafeProxyFactory",
      "MultiSend",
      "MultiSendCallOnly",
      "CompatibilityFallbackHandler",
      "Safe4337Module",
      "SafeModuleSetup"
    ])
    for (const check of checks) expect(check, check.contract).toMatchObject({ ok: true })
    expect(devnet.bundlerUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(await run(Bundler.use((b) => b.supportedEntryPoints(chainId())))).toEqual([
      devnet.deployment.contracts.entryPoint
    ])

    const nonceBefore = await devnet.publicClient.getTransactionCount({ address: devnet.operator.address })
    const wallet = createWalletClient({
      chain: devnet.chain,
      account: devnet.operator,
      transport: http(devnet.anvil.rpcUrl)
    })
    const again = await deployErc4337Contracts(wallet, devnet.publicClient, {
      address: devnet.deployment.contracts.verifyingPaymaster,
      signer: devnet.paymasterSigner.address,
      depositWei: parseEther("10"),
      minDepositWei: parseEther("1"),
      stakeWei: parseEther("1")
    })
    expect(again.contracts).toEqual(devnet.deployment.contracts)
    expect(new Set(again.steps.map((step) => step.action))).toEqual(new Set(["present"]))
    expect(await devnet.publicClient.getTransactionCount({ address: devnet.operator.address })).toBe(nonceBefore)
  })

  it("refuses to take over a paymaster that another signer controls", async () => {
    const wallet = createWalletClient({
      chain: devnet.chain,
      account: devnet.operator,
      transport: http(devnet.anvil.rpcUrl)
    })
    await expect(
      deployErc4337Contracts(wallet, devnet.publicClient, {
        address: devnet.deployment.contracts.verifyingPaymaster,
        signer: freshAddress(),
        depositWei: parseEther("10"),
        stakeWei: parseEther("1")
      })
    ).rejects.toThrow(/not the operator's/)
  })

  it("computes the paymaster's hash locally exactly as the contract does", async () => {
    const user = newUser()
    await mint(user.safe.address, 1n)
    const prepared = await prepare(user, [token.transferCall(freshAddress(), 1n)])
    const onChain = await devnet.publicClient.readContract({
      address: devnet.deployment.contracts.verifyingPaymaster,
      abi: parseAbi([
        "function getHash((address sender, uint256 nonce, bytes initCode, bytes callData, bytes32 accountGasLimits, uint256 preVerificationGas, bytes32 gasFees, bytes paymasterAndData, bytes signature) userOp, uint48 validUntil, uint48 validAfter) view returns (bytes32)"
      ]),
      functionName: "getHash",
      args: [toPackedUserOperation(prepared.op), 0, 0]
    })
    expect(
      verifyingPaymasterHash(prepared.op, {
        paymaster: devnet.deployment.contracts.verifyingPaymaster,
        chainId: chainId(),
        validUntil: 0,
        validAfter: 0,
        paymasterVerificationGasLimit: prepared.op.paymasterVerificationGasLimit ?? 0n,
        paymasterPostOpGasLimit: 0n
      })
    ).toBe(onChain)
  })

  it("runs a sponsored 3-call batch from a new Safe: deploys it at its address and runs the calls at once", async () => {
    const user = newUser()
    await mint(user.safe.address, 100n)
    const [a, b, c] = [freshAddress(), freshAddress(), freshAddress()]
    const deposit = await paymasterDeposit()
    expect(await devnet.publicClient.getBalance({ address: user.safe.address })).toBe(0n)

    const prepared = await prepare(user, [
      token.transferCall(a, 1n),
      token.transferCall(b, 2n),
      token.transferCall(c, 3n)
    ])
    expect(prepared.op.factory).toBe(user.safe.factory)
    const receipt = await sendAndWait(prepared)

    expect(receipt.success).toBe(true)
    expect(getAddress(receipt.sender)).toBe(user.safe.address)
    expect(await devnet.publicClient.getCode({ address: user.safe.address })).toMatch(/^0x.+/)
    expect([await balanceOf(a), await balanceOf(b), await balanceOf(c), await balanceOf(user.safe.address)]).toEqual([
      1n,
      2n,
      3n,
      94n
    ])
    // One transaction, one block: the three transfers happened together.
    expect(receipt.logs.filter((log) => getAddress(log.address) === token.address)).toHaveLength(3)
    expect(await devnet.publicClient.getBalance({ address: user.safe.address })).toBe(0n)
    expect(await paymasterDeposit()).toBe(deposit - receipt.actualGasCost)
    expect(getAddress(receipt.paymaster ?? "0x")).toBe(devnet.deployment.contracts.verifyingPaymaster)

    const next = await sendAndWait(
      await prepare(user, [token.transferCall(a, 1n), token.transferCall(b, 1n), token.transferCall(c, 1n)])
    )
    expect(next.success).toBe(true)
    console.log(
      `gas per sponsored 3-call batch (charged / the bundle transaction's): with the Safe's deployment ${receipt.actualGasUsed} / ${receipt.receipt.gasUsed}, from the deployed Safe ${next.actualGasUsed} / ${next.receipt.gasUsed}`
    )
  })

  it("reads the chain and the bundler in two round trips (four requests) before eth_sendUserOperation", async () => {
    const node = await startRpcProxy(devnet.anvil.rpcUrl)
    const alto = await startRpcProxy(devnet.bundlerUrl)
    try {
      const counted = makeJsonRpcBundler([{ chainId: chainId(), url: alto.url }])
      const reader = createPublicClient({ chain: devnet.chain, transport: http(node.url) })
      const user = newUser()
      await mint(user.safe.address, 10n)
      node.reset()
      alto.reset()
      const state = await readAccountChainState(reader, user.safe.address)
      const prepared = await Effect.runPromise(
        Effect.provideService(
          prepareSafeOperation({
            chainId: chainId(),
            account: user.safe,
            calls: [
              token.transferCall(freshAddress(), 1n),
              token.transferCall(freshAddress(), 1n),
              token.transferCall(freshAddress(), 1n)
            ],
            deployed: state.deployed,
            fees: state.fees,
            signers: [user.owner],
            sponsor: sponsor()
          }),
          Bundler,
          counted
        )
      )
      // The three node reads go out together (one round trip), then the bundler's estimate.
      expect([...node.methods()].sort()).toEqual(["eth_getBlockByNumber", "eth_getCode", "eth_maxPriorityFeePerGas"])
      expect(alto.methods()).toEqual(["eth_estimateUserOperationGas"])
      console.log(
        `requests before eth_sendUserOperation: ${node.requests()} to the node at once, ${alto.requests()} to the bundler`
      )
      expect((await sendAndWait(prepared)).success).toBe(true)
    } finally {
      await node.stop()
      await alto.stop()
    }
  })

  it("lands a sponsored operation whose gas comes from a self-paid estimate (the fallback for alto's AA30)", async () => {
    const user = newUser()
    await mint(user.safe.address, 10n)
    const to = freshAddress()
    const prepared = await prepare(user, [token.transferCall(to, 1n), token.transferCall(to, 2n)], {
      gas: { kind: "self-paid estimate" }
    })
    expect(prepared.gasFrom).toBe("self-paid estimate")
    expect((await sendAndWait(prepared)).success).toBe(true)
    expect(await balanceOf(to)).toBe(3n)
  })

  it("reports a revert in call 2 of 3 with its index and reason, and does none of the calls", async () => {
    const user = await deployedUser(10n)
    const [a, b, c] = [freshAddress(), freshAddress(), freshAddress()]
    const calls = [token.transferCall(a, 1n), token.transferCall(b, 1_000n), token.transferCall(c, 1n)]

    // Before sending: the bundler's estimate refuses the batch (-32521, execution reverted: the caller's batch, 422),
    // and the failing call is located.
    const refused = await runExit(
      Effect.gen(function* () {
        const state = yield* Effect.promise(() => readAccountChainState(devnet.publicClient, user.safe.address))
        return yield* prepareSafeOperation({
          chainId: chainId(),
          account: user.safe,
          calls,
          deployed: state.deployed,
          fees: state.fees,
          signers: [user.owner],
          sponsor: sponsor()
        })
      })
    )
    expect(String(refused)).toMatch(/CallReverted/)
    const located = (await simulateBatch(devnet.publicClient, user.safe.address, calls)).revert
    expect(located?.index).toBe(1)
    const reason = decodeErrorResult({ abi: tokenErrors, data: located?.data ?? "0x" })
    expect(reason).toEqual({
      abiItem: tokenErrors[0],
      errorName: "InsufficientBalance",
      args: [user.safe.address, 8n, 1_000n] // call 1 ran first in the simulation
    })

    // Sent anyway (hand-set gas): it lands, reverts as a whole, and the receipt carries the call's reason.
    const prepared = await prepare(user, calls, {
      gas: {
        kind: "given",
        limits: { callGasLimit: 300_000n, verificationGasLimit: 200_000n, preVerificationGas: 100_000n }
      }
    })
    const receipt = await sendAndWait(prepared)
    expect(receipt.success).toBe(false)
    // MultiSendCallOnly 1.4.1 reverts without data: the failing call is found on the block before inclusion.
    expect(operationRevertData(receipt)).toBeUndefined()
    const onChain = (
      await simulateBatch(devnet.publicClient, user.safe.address, calls, receipt.receipt.blockNumber - 1n)
    ).revert
    expect(onChain?.index).toBe(1)
    expect(decodeErrorResult({ abi: tokenErrors, data: onChain?.data ?? "0x" }).errorName).toBe("InsufficientBalance")
    expect([await balanceOf(a), await balanceOf(b), await balanceOf(c), await balanceOf(user.safe.address)]).toEqual([
      0n,
      0n,
      0n,
      9n
    ])
  })

  it("reports the reason of a single call that reverts from the operation's receipt", async () => {
    const user = await deployedUser(2n)
    const prepared = await prepare(user, [token.transferCall(freshAddress(), 5n)], {
      gas: {
        kind: "given",
        limits: { callGasLimit: 200_000n, verificationGasLimit: 200_000n, preVerificationGas: 100_000n }
      }
    })
    const receipt = await sendAndWait(prepared)
    expect(receipt.success).toBe(false)
    expect(decodeErrorResult({ abi: tokenErrors, data: operationRevertData(receipt) ?? "0x" })).toMatchObject({
      errorName: "InsufficientBalance",
      args: [user.safe.address, 1n, 5n]
    })
    expect(await balanceOf(user.safe.address)).toBe(1n)
  })

  it("lands 8 operations of one Safe sent at once, each on its own random nonce key", async () => {
    const user = await deployedUser(100n)
    const recipients = Array.from({ length: 8 }, () => freshAddress())
    const prepared = await Promise.all(recipients.map((to) => prepare(user, [token.transferCall(to, 1n)])))
    expect(new Set(prepared.map((p) => p.op.nonce >> 64n)).size).toBe(8)
    const receipts = await Promise.all(prepared.map(sendAndWait))
    expect(receipts.map((receipt) => receipt.success)).toEqual(Array(8).fill(true))
    expect(await Promise.all(recipients.map(balanceOf))).toEqual(Array(8).fill(1n))
    expect(await balanceOf(user.safe.address)).toBe(91n)
  })

  it("executes a signed operation once, however often it is re-sent", async () => {
    const user = await deployedUser(10n)
    const to = freshAddress()
    const prepared = await prepare(user, [token.transferCall(to, 5n)])
    expect(await send(prepared.op)).toBe(prepared.hash)
    const resentAtOnce = await runExit(
      Bundler.use((b) => b.sendUserOperation(chainId(), prepared.op, devnet.deployment.contracts.entryPoint))
    )
    const receipt = await receiptOf(prepared.hash)
    expect(receipt.success).toBe(true)
    const resentAfter = await runExit(
      Bundler.use((b) => b.sendUserOperation(chainId(), prepared.op, devnet.deployment.contracts.entryPoint))
    )
    // Re-sent while pending: the same hash or "already known"; after inclusion: refused (AA25 nonce).
    if (Exit.isSuccess(resentAtOnce)) expect(resentAtOnce.value).toBe(prepared.hash)
    expect(Exit.isFailure(resentAfter)).toBe(true)
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(await balanceOf(to)).toBe(5n)
    expect(await balanceOf(user.safe.address)).toBe(4n)
  })

  it("refuses an operation signed by someone who is not an owner, and one altered after sponsorship", async () => {
    const user = await deployedUser(10n)
    const to = freshAddress()
    const stranger = privateKeyToAccount(generatePrivateKey())
    const strangerSafe = { owner: stranger, safe: user.safe }
    await expect(prepare(strangerSafe, [token.transferCall(to, 1n)])).rejects.toThrow(/distinct owner/)

    // A signature by a key that is not an owner, put in by hand: the Safe refuses it (AA24).
    const honest = await prepare(user, [token.transferCall(to, 1n)])
    const forgedOp: UserOperation07 = {
      ...honest.op,
      signature: await signSafeOperation({ ...user.safe, owners: [stranger.address] }, honest.op, {
        chainId: chainId(),
        signers: [stranger]
      })
    }
    const refusedSignature = await runExit(
      Bundler.use((b) => b.sendUserOperation(chainId(), forgedOp, devnet.deployment.contracts.entryPoint))
    )
    expect(String(refusedSignature)).toMatch(/BundlerRejected.*AA24/)

    // The owner re-signs an operation whose calls changed after the paymaster signed: the paymaster refuses (AA34),
    // the gateway's own part (its sponsorship), not the caller's.
    const other = await prepare(user, [token.transferCall(to, 9n)])
    const altered = { ...other.op, paymasterData: honest.op.paymasterData }
    const reSigned: UserOperation07 = {
      ...altered,
      signature: await signSafeOperation(user.safe, altered, { chainId: chainId(), signers: [user.owner] })
    }
    const refusedSponsorship = await runExit(
      Bundler.use((b) => b.sendUserOperation(chainId(), reSigned, devnet.deployment.contracts.entryPoint))
    )
    expect(String(refusedSponsorship)).toMatch(/BundlerRefusedSetup.*AA34/)
    expect(await balanceOf(to)).toBe(0n)
  })

  it("signs for the Safe so that viem verifies the signature before deployment (ERC-6492) and after (ERC-1271)", async () => {
    const user = newUser()
    const typedData = {
      domain: { name: "walletgate test", version: "1", chainId: chainId() },
      types: { Note: [{ name: "text", type: "string" }] },
      primaryType: "Note",
      message: { text: "hello" }
    } as const
    const options = { chainId: chainId(), signers: [user.owner] }
    const before = await signSafeHash(user.safe, hashMessage("hello"), { ...options, state: "counterfactual" })
    const beforeTyped = await signSafeHash(user.safe, hashTypedData(typedData), { ...options, state: "counterfactual" })
    const verify = (signature: Hex) =>
      devnet.publicClient.verifyMessage({ address: user.safe.address, message: "hello", signature })
    expect(await verify(before)).toBe(true)
    expect(
      await devnet.publicClient.verifyTypedData({ ...typedData, address: user.safe.address, signature: beforeTyped })
    ).toBe(true)
    const stranger = privateKeyToAccount(generatePrivateKey())
    const forged = await signSafeHash({ ...user.safe, owners: [stranger.address] }, hashMessage("hello"), {
      chainId: chainId(),
      signers: [stranger],
      state: "counterfactual"
    })
    expect(await verify(forged)).toBe(false)
    expect(await devnet.publicClient.getCode({ address: user.safe.address })).toBeUndefined()

    await mint(user.safe.address, 1n)
    expect((await sendAndWait(await prepare(user, [token.transferCall(freshAddress(), 1n)]))).success).toBe(true)
    const after = await signSafeHash(user.safe, hashMessage("hello"), { ...options, state: "deployed" })
    expect(after.length).toBe(132)
    expect(await verify(after)).toBe(true)
    expect(await verify(before)).toBe(true)
    expect(
      await devnet.publicClient.verifyTypedData({
        ...typedData,
        address: user.safe.address,
        signature: await signSafeHash(user.safe, hashTypedData(typedData), { ...options, state: "deployed" })
      })
    ).toBe(true)
    expect(
      await verify(
        await signSafeHash({ ...user.safe, owners: [stranger.address] }, hashMessage("hello"), {
          chainId: chainId(),
          signers: [stranger],
          state: "deployed"
        })
      )
    ).toBe(false)
  })

  it("stops alto with its whole process group", async () => {
    // A second alto beside the worker's devnet (which stays up), its executor and utility accounts new and funded.
    const [executor, utility] = [generatePrivateKey(), generatePrivateKey()]
    for (const key of [executor, utility]) await devnet.setBalance(privateKeyToAccount(key).address, parseEther("10"))
    const started = await startAlto({
      rpcUrl: devnet.anvil.rpcUrl,
      entryPoints: [devnet.deployment.contracts.entryPoint],
      executorKeys: [executor],
      utilityKey: utility,
      blockTimeMs: 100
    })
    const altoProcesses = () =>
      execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" })
        .split("\n")
        .filter((line) => line.includes("--entrypoints") && line.includes(`--port ${started.port} `))
    expect(altoProcesses()).toHaveLength(1)
    await started.stop()
    expect(altoProcesses()).toEqual([])
    await expect(fetch(started.bundlerUrl, { method: "POST" })).rejects.toMatchObject({
      message: "fetch failed",
      cause: { code: "ECONNREFUSED" }
    })
  })
})
