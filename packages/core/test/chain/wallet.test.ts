import {
  type Address,
  decodeErrorResult,
  encodeFunctionData,
  type Hex,
  hashTypedData,
  isHex,
  keccak256,
  type LocalAccount,
  parseEther,
  parseEventLogs,
  parseSignature,
  serializeSignature,
  stringToHex,
  zeroHash
} from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { testTokenArtifact, walletAccountArtifact, walletFactoryArtifact } from "../../src/chain/artifacts"
import {
  type BatchCall,
  type BatchToSign,
  batchTypedData,
  deployTestToken,
  predictAccountAddress,
  signBatch
} from "../../src/chain/contracts"
import { devAccount, freshAddress, type LocalChain, revertOf, startLocalChain } from "./fixture"

/** The order n of the secp256k1 group. */
const secp256k1N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n

let local: LocalChain
let token: Address

const transferToken = (to: Address, amount: bigint): BatchCall => ({
  to: token,
  value: 0n,
  data: encodeFunctionData({ abi: testTokenArtifact.abi, functionName: "transfer", args: [to, amount] })
})

const ethBalance = (address: Address) => local.publicClient.getBalance({ address })
const tokenBalance = (address: Address) =>
  local.publicClient.readContract({
    address: token,
    abi: testTokenArtifact.abi,
    functionName: "balanceOf",
    args: [address]
  })
const accountNonce = (account: Address) =>
  local.publicClient.readContract({ address: account, abi: walletAccountArtifact.abi, functionName: "nonce" })

/** A new owner key (never funded: the relayer pays) and its predicted account, funded with 1 ETH and 1 000 tokens. */
const newFundedAccount = async (label: string): Promise<{ owner: LocalAccount; salt: Hex; account: Address }> => {
  const owner = privateKeyToAccount(generatePrivateKey())
  const salt = keccak256(stringToHex(label))
  const account = await predictAccountAddress(local.publicClient, local.contracts.walletFactory, owner.address, salt)
  await local.receipt(await local.relayer.sendTransaction({ to: account, value: parseEther("1") }))
  await local.receipt(
    await local.relayer.writeContract({
      address: token,
      abi: testTokenArtifact.abi,
      functionName: "mint",
      args: [account, 1_000n]
    })
  )
  return { owner, salt, account }
}

/** Submits `batch` with `signature` through the account's own `execute`, as the relayer. */
const simulateExecute = (batch: BatchToSign, signature: Hex) =>
  local.publicClient.simulateContract({
    account: local.relayer.account,
    address: batch.account,
    abi: walletAccountArtifact.abi,
    functionName: "execute",
    args: [batch.calls, batch.deadline, signature]
  })

const execute = async (batch: BatchToSign, signature: Hex) => {
  const { request } = await simulateExecute(batch, signature)
  return local.receipt(await local.relayer.writeContract(request))
}

beforeAll(async () => {
  // Not anvil's default chain id, so a contract that ignored the real chain id would be caught.
  local = await startLocalChain({ chainId: 71_337 })
  token = await deployTestToken(local.relayer, local.publicClient, { name: "Test", symbol: "TST", decimals: 18 })
})

afterAll(async () => {
  await local?.stop()
})

describe("WalletFactory and WalletAccount", () => {
  it("deploys the account at its predicted address and runs a signed 2-call batch in the same transaction", async () => {
    const { owner, salt, account } = await newFundedAccount("first-use")
    expect(await local.publicClient.getCode({ address: account })).toBeUndefined()
    const ethRecipient = freshAddress()
    const tokenRecipient = freshAddress()
    const batch: BatchToSign = {
      account,
      chainId: local.chain.id,
      calls: [{ to: ethRecipient, value: parseEther("0.25"), data: "0x" }, transferToken(tokenRecipient, 400n)],
      nonce: 0n,
      deadline: await local.deadlineIn(600)
    }
    const signature = await signBatch(owner, batch)

    const hash = await local.relayer.writeContract({
      address: local.contracts.walletFactory,
      abi: walletFactoryArtifact.abi,
      functionName: "deployAndExecute",
      args: [owner.address, salt, batch.calls, batch.deadline, signature]
    })
    const receipt = await local.receipt(hash)

    expect(receipt.status).toBe("success")
    const [created] = parseEventLogs({
      abi: walletFactoryArtifact.abi,
      eventName: "AccountCreated",
      logs: receipt.logs
    })
    expect(created?.args.account).toBe(account)
    const [executed] = parseEventLogs({
      abi: walletAccountArtifact.abi,
      eventName: "BatchExecuted",
      logs: receipt.logs
    })
    expect(executed?.address.toLowerCase()).toBe(account.toLowerCase())
    expect(executed?.args.nonce).toBe(0n)
    expect(await ethBalance(ethRecipient)).toBe(parseEther("0.25"))
    expect(await ethBalance(account)).toBe(parseEther("0.75"))
    expect(await tokenBalance(tokenRecipient)).toBe(400n)
    expect(await tokenBalance(account)).toBe(600n)
    expect(await accountNonce(account)).toBe(1n)
    expect(
      await local.publicClient.readContract({ address: account, abi: walletAccountArtifact.abi, functionName: "owner" })
    ).toBe(owner.address)
  })

  it("runs later batches through execute, with the next nonce", async () => {
    const { owner, salt, account } = await newFundedAccount("later-use")
    const first: BatchToSign = {
      account,
      chainId: local.chain.id,
      calls: [transferToken(freshAddress(), 1n)],
      nonce: 0n,
      deadline: await local.deadlineIn(600)
    }
    await local.receipt(
      await local.relayer.writeContract({
        address: local.contracts.walletFactory,
        abi: walletFactoryArtifact.abi,
        functionName: "deployAndExecute",
        args: [owner.address, salt, first.calls, first.deadline, await signBatch(owner, first)]
      })
    )
    // A deployed account still accepts plain ETH transfers (through the proxy to `receive`).
    await local.receipt(await local.relayer.sendTransaction({ to: account, value: parseEther("0.5") }))
    expect(await ethBalance(account)).toBe(parseEther("1.5"))

    const ethRecipient = freshAddress()
    const tokenRecipient = freshAddress()
    const second: BatchToSign = {
      account,
      chainId: local.chain.id,
      calls: [{ to: ethRecipient, value: parseEther("1.2"), data: "0x" }, transferToken(tokenRecipient, 999n)],
      nonce: 1n,
      deadline: await local.deadlineIn(600)
    }
    const receipt = await execute(second, await signBatch(owner, second))

    expect(receipt.status).toBe("success")
    expect(await ethBalance(ethRecipient)).toBe(parseEther("1.2"))
    expect(await ethBalance(account)).toBe(parseEther("0.3"))
    expect(await tokenBalance(tokenRecipient)).toBe(999n)
    expect(await tokenBalance(account)).toBe(0n)
    expect(await accountNonce(account)).toBe(2n)
  })

  it("computes the same EIP-712 digest as viem", async () => {
    const { owner, salt, account } = await newFundedAccount("digest")
    await local.receipt(
      await local.relayer.writeContract({
        address: local.contracts.walletFactory,
        abi: walletFactoryArtifact.abi,
        functionName: "createAccount",
        args: [owner.address, salt]
      })
    )
    const batch: BatchToSign = {
      account,
      chainId: local.chain.id,
      calls: [
        { to: freshAddress(), value: 7n, data: "0x" },
        transferToken(freshAddress(), 3n),
        { to: freshAddress(), value: 0n, data: "0xdeadbeef00" }
      ],
      nonce: 42n,
      deadline: 1_900_000_000n
    }
    const onChain = await local.publicClient.readContract({
      address: account,
      abi: walletAccountArtifact.abi,
      functionName: "batchDigest",
      args: [batch.calls, batch.nonce, batch.deadline]
    })
    expect(onChain).toBe(hashTypedData(batchTypedData(batch)))
    expect(onChain).not.toBe(hashTypedData(batchTypedData({ ...batch, calls: batch.calls.slice(1) })))
  })

  it("reverts the whole batch with CallFailed(1, reason) when the second call fails, changing nothing", async () => {
    const { owner, salt, account } = await newFundedAccount("atomic")
    const ethRecipient = freshAddress()
    const tokenRecipient = freshAddress()
    const batch: BatchToSign = {
      account,
      chainId: local.chain.id,
      // The first call alone would succeed; the second asks for more tokens than the account holds.
      calls: [{ to: ethRecipient, value: parseEther("0.1"), data: "0x" }, transferToken(tokenRecipient, 1_001n)],
      nonce: 0n,
      deadline: await local.deadlineIn(600)
    }
    const signature = await signBatch(owner, batch)
    const args = [owner.address, salt, batch.calls, batch.deadline, signature] as const

    const failure = await revertOf(
      local.publicClient.simulateContract({
        account: local.relayer.account,
        address: local.contracts.walletFactory,
        abi: walletFactoryArtifact.abi,
        functionName: "deployAndExecute",
        args
      })
    )
    expect(failure.errorName).toBe("CallFailed")
    expect(failure.args[0]).toBe(1n)
    const reason = failure.args[1]
    if (!isHex(reason)) throw new Error(`reason is not hex: ${String(reason)}`)
    const inner = decodeErrorResult({ abi: testTokenArtifact.abi, data: reason })
    expect(inner.errorName).toBe("InsufficientBalance")
    expect(inner.args).toEqual([account, 1_000n, 1_001n])

    // Mined anyway (a fixed gas limit skips estimation): the transaction reverts and nothing of it remains.
    const receipt = await local.receipt(
      await local.relayer.writeContract({
        address: local.contracts.walletFactory,
        abi: walletFactoryArtifact.abi,
        functionName: "deployAndExecute",
        args,
        gas: 1_000_000n
      })
    )
    expect(receipt.status).toBe("reverted")
    expect(await local.publicClient.getCode({ address: account })).toBeUndefined()
    expect(await ethBalance(ethRecipient)).toBe(0n)
    expect(await ethBalance(account)).toBe(parseEther("1"))
    expect(await tokenBalance(account)).toBe(1_000n)
    expect(await tokenBalance(tokenRecipient)).toBe(0n)

    // On a deployed account too: the nonce is not consumed, the first call is undone.
    await local.receipt(
      await local.relayer.writeContract({
        address: local.contracts.walletFactory,
        abi: walletFactoryArtifact.abi,
        functionName: "createAccount",
        args: [owner.address, salt]
      })
    )
    expect((await revertOf(simulateExecute(batch, signature))).errorName).toBe("CallFailed")
    const again = await local.receipt(
      await local.relayer.writeContract({
        address: account,
        abi: walletAccountArtifact.abi,
        functionName: "execute",
        args: [batch.calls, batch.deadline, signature],
        gas: 1_000_000n
      })
    )
    expect(again.status).toBe("reverted")
    expect(await accountNonce(account)).toBe(0n)
    expect(await ethBalance(ethRecipient)).toBe(0n)
    expect(await tokenBalance(account)).toBe(1_000n)
  })

  describe("refuses a batch that its owner did not sign for this account, chain, nonce and time", () => {
    let owner: LocalAccount
    let spent: { readonly batch: BatchToSign; readonly signature: Hex }
    /** An unsigned batch at the account's current nonce (1), which each test signs wrongly. */
    let batch: BatchToSign

    beforeAll(async () => {
      const funded = await newFundedAccount("refusals")
      owner = funded.owner
      await local.receipt(
        await local.relayer.writeContract({
          address: local.contracts.walletFactory,
          abi: walletFactoryArtifact.abi,
          functionName: "createAccount",
          args: [owner.address, funded.salt]
        })
      )
      const first: BatchToSign = {
        account: funded.account,
        chainId: local.chain.id,
        calls: [{ to: freshAddress(), value: 1n, data: "0x" }],
        nonce: 0n,
        deadline: await local.deadlineIn(600)
      }
      spent = { batch: first, signature: await signBatch(owner, first) }
      expect((await execute(spent.batch, spent.signature)).status).toBe("success")
      batch = { ...first, nonce: 1n }
    })

    it("a replayed signature", async () => {
      expect((await revertOf(simulateExecute(spent.batch, spent.signature))).errorName).toBe("InvalidSignature")
    })

    it("a signature for another chain id", async () => {
      const signature = await signBatch(owner, { ...batch, chainId: local.chain.id + 1 })
      expect((await revertOf(simulateExecute(batch, signature))).errorName).toBe("InvalidSignature")
    })

    it("a signature for another account of the same owner", async () => {
      const other = await predictAccountAddress(
        local.publicClient,
        local.contracts.walletFactory,
        owner.address,
        zeroHash
      )
      const signature = await signBatch(owner, { ...batch, account: other })
      expect((await revertOf(simulateExecute(batch, signature))).errorName).toBe("InvalidSignature")
    })

    it("a signature by another key", async () => {
      const signature = await signBatch(privateKeyToAccount(generatePrivateKey()), batch)
      expect((await revertOf(simulateExecute(batch, signature))).errorName).toBe("InvalidSignature")
    })

    it("a signature over other calls", async () => {
      const signature = await signBatch(owner, { ...batch, calls: [{ to: freshAddress(), value: 1n, data: "0x" }] })
      expect((await revertOf(simulateExecute(batch, signature))).errorName).toBe("InvalidSignature")
    })

    it("a batch past its deadline", async () => {
      const expired = { ...batch, deadline: (await local.publicClient.getBlock()).timestamp - 1n }
      const failure = await revertOf(simulateExecute(expired, await signBatch(owner, expired)))
      expect(failure).toEqual({ errorName: "DeadlineExpired", args: [expired.deadline] })
    })

    it("the high-s twin of a valid signature, and a v other than 27 or 28", async () => {
      const signature = await signBatch(owner, batch)
      const { r, s, yParity } = parseSignature(signature)
      // (r, n - s) with the other parity recovers the same key: ecrecover accepts it, the account must not.
      const twin = serializeSignature({
        r,
        s: `0x${(secp256k1N - BigInt(s)).toString(16).padStart(64, "0")}`,
        yParity: yParity === 0 ? 1 : 0
      })
      expect((await revertOf(simulateExecute(batch, twin))).errorName).toBe("InvalidSignature")
      const rawV: Hex = `0x${signature.slice(2, -2)}${yParity === 0 ? "00" : "01"}`
      expect((await revertOf(simulateExecute(batch, rawV))).errorName).toBe("InvalidSignature")
      const short: Hex = `0x${signature.slice(2, -2)}`
      expect((await revertOf(simulateExecute(batch, short))).errorName).toBe("InvalidSignature")
      // The untouched signature is accepted, so the refusals above are about the signature alone.
      await expect(simulateExecute(batch, signature)).resolves.toBeDefined()
    })
  })

  it("creates each account once, and nobody can re-initialise an account or the implementation", async () => {
    const owner = privateKeyToAccount(generatePrivateKey())
    const create = () =>
      local.publicClient.simulateContract({
        account: local.relayer.account,
        address: local.contracts.walletFactory,
        abi: walletFactoryArtifact.abi,
        functionName: "createAccount",
        args: [owner.address, zeroHash]
      })
    const first = await create()
    await local.receipt(await local.relayer.writeContract(first.request))
    const second = await create()
    expect(second.result).toBe(first.result)
    expect(
      await predictAccountAddress(local.publicClient, local.contracts.walletFactory, owner.address, zeroHash)
    ).toBe(first.result)

    const initialize = (address: Address) =>
      local.publicClient.simulateContract({
        account: devAccount(5),
        address,
        abi: walletAccountArtifact.abi,
        functionName: "initialize",
        args: [devAccount(5).address]
      })
    expect((await revertOf(initialize(first.result))).errorName).toBe("AlreadyInitialized")
    expect((await revertOf(initialize(local.contracts.walletAccountImplementation))).errorName).toBe(
      "AlreadyInitialized"
    )
  })
})
