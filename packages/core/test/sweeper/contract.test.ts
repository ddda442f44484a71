import { type Address, parseEther, parseEventLogs, toFunctionSelector } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { beforeAll, describe, expect, it } from "vitest"
import { sweeperArtifact, testTokenArtifact } from "../../src/chain/artifacts"
import { deployTestToken } from "../../src/deploy/contracts"
import { devAccount, freshAddress, type LocalChain, revertOf, startLocalChain } from "../chain/fixture"

let local: LocalChain
let token: Address

/** A holder that sends no transaction during a sweep, so its ETH balance changes by exactly what it is paid. */
const holder = privateKeyToAccount(generatePrivateKey())
const operator = devAccount(1)
const taker = devAccount(3)

const ethBalance = (address: Address) => local.publicClient.getBalance({ address })
const tokenBalance = (address: Address) =>
  local.publicClient.readContract({
    address: token,
    abi: testTokenArtifact.abi,
    functionName: "balanceOf",
    args: [address]
  })

const setRate = async (rate: bigint) =>
  local.receipt(
    await local.walletFor(operator).writeContract({
      address: local.contracts.sweeper,
      abi: sweeperArtifact.abi,
      functionName: "setRate",
      args: [token, rate]
    })
  )

const priceOf = (amount: bigint) =>
  local.publicClient.readContract({
    address: local.contracts.sweeper,
    abi: sweeperArtifact.abi,
    functionName: "priceOf",
    args: [token, amount]
  })

const sweep = (amount: bigint, value: bigint, from: Address = holder.address) =>
  local.publicClient.simulateContract({
    account: taker,
    address: local.contracts.sweeper,
    abi: sweeperArtifact.abi,
    functionName: "sweep",
    args: [token, from, amount],
    value
  })

beforeAll(async () => {
  local = await startLocalChain()
  token = await deployTestToken(local.deployer, local.publicClient, { name: "Dust", symbol: "DST", decimals: 18 })
  await local.receipt(
    await local.deployer.writeContract({
      address: token,
      abi: testTokenArtifact.abi,
      functionName: "mint",
      args: [holder.address, parseEther("5")]
    })
  )
  // Gas for the holder's one approval.
  await local.receipt(await local.deployer.sendTransaction({ to: holder.address, value: parseEther("0.01") }))
  await local.receipt(
    await local.walletFor(holder).writeContract({
      address: token,
      abi: testTokenArtifact.abi,
      functionName: "approve",
      args: [local.contracts.sweeper, parseEther("3")]
    })
  )
})

describe("Sweeper", () => {
  it("is configured as deployed", async () => {
    const read = (functionName: "operator" | "feeRecipient" | "feeBps") =>
      local.publicClient.readContract({ address: local.contracts.sweeper, abi: sweeperArtifact.abi, functionName })
    expect(await read("operator")).toBe(local.sweeper.operator)
    expect(await read("feeRecipient")).toBe(local.sweeper.feeRecipient)
    expect(await read("feeBps")).toBe(BigInt(local.sweeper.feeBps))
  })

  it("lets only the operator post rates, and sweeps nothing without one", async () => {
    expect(await revertOf(sweep(1n, 1n))).toEqual({ errorName: "NoRate", args: [token] })
    const byOther = local.publicClient.simulateContract({
      account: taker,
      address: local.contracts.sweeper,
      abi: sweeperArtifact.abi,
      functionName: "setRate",
      args: [token, 1n]
    })
    expect((await revertOf(byOther)).errorName).toBe("NotOperator")
  })

  it("prices amounts at the posted rate, rounded up for the holder", async () => {
    // 0.0004 ETH per whole token (1e18 base units).
    await setRate(parseEther("0.0004"))
    expect(await priceOf(parseEther("2.5"))).toBe(parseEther("0.001"))
    expect(await priceOf(1n)).toBe(1n)
    expect(await priceOf(2_501n)).toBe(2n)
  })

  it("gives the taker the tokens and pays the holder the ETH less the fee, which goes to the fee recipient", async () => {
    await setRate(parseEther("0.0004"))
    const amount = parseEther("2.5")
    const ethPaid = parseEther("0.0012") + 7n // more than the price (0.001 ETH): the taker's choice
    const fee = (ethPaid * 250n) / 10_000n
    const holderEth = await ethBalance(holder.address)
    const feeRecipientEth = await ethBalance(local.sweeper.feeRecipient)
    const takerTokens = await tokenBalance(taker.address)

    const { request } = await sweep(amount, ethPaid)
    const receipt = await local.receipt(await local.walletFor(taker).writeContract(request))

    expect(receipt.status).toBe("success")
    expect(await ethBalance(holder.address)).toBe(holderEth + ethPaid - fee)
    expect(await ethBalance(local.sweeper.feeRecipient)).toBe(feeRecipientEth + fee)
    expect(await ethBalance(local.contracts.sweeper)).toBe(0n)
    expect(await tokenBalance(holder.address)).toBe(parseEther("2.5"))
    expect(await tokenBalance(taker.address)).toBe(takerTokens + amount)

    const events = parseEventLogs({ abi: sweeperArtifact.abi, eventName: "Swept", logs: receipt.logs })
    expect(events.map((event) => event.args)).toEqual([
      { holder: holder.address, token, taker: taker.address, amount, ethPaid, fee }
    ])
  })

  it("refuses to sweep for less than the price, nothing, more than approved, or from a holder who never approved", async () => {
    await setRate(parseEther("0.0004"))
    const price = await priceOf(parseEther("0.5"))
    expect(await revertOf(sweep(parseEther("0.5"), price - 1n))).toEqual({
      errorName: "Underpaid",
      args: [price - 1n, price]
    })
    expect(await revertOf(sweep(0n, 0n))).toEqual({ errorName: "ZeroAmount", args: [] })
    // 0.5 of the 3 approved remain after the sweep above.
    expect((await revertOf(sweep(parseEther("0.6"), parseEther("1")))).errorName).toBe("TokenTransferFailed")
    expect((await revertOf(sweep(1n, 1n, freshAddress()))).errorName).toBe("TokenTransferFailed")
  })

  it("stops sweeps of a token whose rate is set back to zero", async () => {
    await setRate(0n)
    expect(await revertOf(sweep(1n, parseEther("1")))).toEqual({ errorName: "NoRate", args: [token] })
  })

  it("refuses a fee above 100 %", async () => {
    // viem does not decode a constructor's custom error; its selector is in the message.
    await expect(
      local.deployer.deployContract({
        ...sweeperArtifact,
        args: [operator.address, operator.address, 10_001n]
      })
    ).rejects.toThrow(toFunctionSelector("InvalidConfig()"))
  })
})
