import solc from "solc"
import { type Address, decodeErrorResult, type Hex, isHex, parseAbi, parseEther, zeroHash } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { disperseArtifact, testTokenArtifact, walletFactoryArtifact } from "../../src/chain/artifacts"
import { deployTestToken, predictAccountAddress } from "../../src/chain/contracts"
import { devAccount, freshAddress, type LocalChain, revertOf, startLocalChain } from "./fixture"

/**
 * Tokens that break the ERC-20 rules in the two ways deployed tokens do, to test Disperse's safe transfers: one whose
 * `transferFrom` returns nothing (as USDT's on mainnet), one that returns false instead of reverting.
 */
const quirkyTokensSource = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;
contract NoReturnToken {
    mapping(address => uint256) public balanceOf;
    function mint(address to, uint256 value) external { balanceOf[to] += value; }
    function transferFrom(address from, address to, uint256 value) external {
        balanceOf[from] -= value;
        balanceOf[to] += value;
    }
}
contract FalseToken {
    function transferFrom(address, address, uint256) external pure returns (bool) { return false; }
}
`

/** The quirky tokens' ABI, as one (their functions do not clash). */
const quirkyTokenAbi = parseAbi([
  "function balanceOf(address) view returns (uint256)",
  "function mint(address to, uint256 value)"
])

interface SolcOutput {
  readonly errors?: ReadonlyArray<{ readonly severity: string; readonly formattedMessage: string }>
  readonly contracts: Readonly<
    Record<string, Readonly<Record<string, { readonly evm: { bytecode: { object: string } } }>>>
  >
}

const compileQuirkyTokens = (): Readonly<Record<"NoReturnToken" | "FalseToken", Hex>> => {
  const input = {
    language: "Solidity",
    sources: { "Quirky.sol": { content: quirkyTokensSource } },
    settings: { evmVersion: "cancun", outputSelection: { "*": { "*": ["evm.bytecode.object"] } } }
  }
  const compiled: string = solc.compile(JSON.stringify(input))
  const output = JSON.parse(compiled) as SolcOutput
  const errors = (output.errors ?? []).filter((e) => e.severity === "error")
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join("\n"))
  const bytecode = (name: string): Hex => `0x${output.contracts["Quirky.sol"]?.[name]?.evm.bytecode.object ?? ""}`
  return { NoReturnToken: bytecode("NoReturnToken"), FalseToken: bytecode("FalseToken") }
}

let local: LocalChain
let token: Address

const ethBalance = (address: Address) => local.publicClient.getBalance({ address })
const tokenBalance = (tokenAddress: Address, holder: Address) =>
  local.publicClient.readContract({
    address: tokenAddress,
    abi: testTokenArtifact.abi,
    functionName: "balanceOf",
    args: [holder]
  })

/** A sender with its own key (dev account 2), so the relayer's balance is not involved. */
const sender = devAccount(2)

const disperseEther = (recipients: ReadonlyArray<Address>, amounts: ReadonlyArray<bigint>, value: bigint) =>
  local.publicClient.simulateContract({
    account: sender,
    address: local.contracts.disperse,
    abi: disperseArtifact.abi,
    functionName: "disperseEther",
    args: [recipients, amounts],
    value
  })

const disperseToken = (tokenAddress: Address, recipients: ReadonlyArray<Address>, amounts: ReadonlyArray<bigint>) =>
  local.publicClient.simulateContract({
    account: sender,
    address: local.contracts.disperse,
    abi: disperseArtifact.abi,
    functionName: "disperseToken",
    args: [tokenAddress, recipients, amounts]
  })

const approveDisperse = async (amount: bigint) => {
  await local.receipt(
    await local.walletFor(sender).writeContract({
      address: token,
      abi: testTokenArtifact.abi,
      functionName: "approve",
      args: [local.contracts.disperse, amount]
    })
  )
}

beforeAll(async () => {
  local = await startLocalChain()
  token = await deployTestToken(local.relayer, local.publicClient, { name: "Test", symbol: "TST", decimals: 6 })
  await local.receipt(
    await local.relayer.writeContract({
      address: token,
      abi: testTokenArtifact.abi,
      functionName: "mint",
      args: [sender.address, 1_000_000n]
    })
  )
})

afterAll(async () => {
  await local?.stop()
})

describe("Disperse", () => {
  it("pays ETH to 3 recipients with the exact amounts, a smart account among them", async () => {
    // A WalletAccount clone as recipient: its `receive` runs behind a DELEGATECALL, more than a 2300-gas stipend.
    const owner = privateKeyToAccount(generatePrivateKey())
    await local.receipt(
      await local.relayer.writeContract({
        address: local.contracts.walletFactory,
        abi: walletFactoryArtifact.abi,
        functionName: "createAccount",
        args: [owner.address, zeroHash]
      })
    )
    const smartAccount = await predictAccountAddress(
      local.publicClient,
      local.contracts.walletFactory,
      owner.address,
      zeroHash
    )
    const recipients = [freshAddress(), smartAccount, freshAddress()]
    const amounts = [parseEther("0.1"), parseEther("0.2") + 1n, 3n]
    const total = amounts.reduce((sum, amount) => sum + amount, 0n)

    const { request } = await disperseEther(recipients, amounts, total)
    expect((await local.receipt(await local.walletFor(sender).writeContract(request))).status).toBe("success")

    expect(await Promise.all(recipients.map(ethBalance))).toEqual(amounts)
    expect(await ethBalance(local.contracts.disperse)).toBe(0n)
  })

  it("refuses ETH that is not exactly the sum, and lists of different lengths", async () => {
    const recipients = [freshAddress(), freshAddress(), freshAddress()]
    const amounts = [1n, 2n, 3n]
    expect(await revertOf(disperseEther(recipients, amounts, 7n))).toEqual({ errorName: "WrongValue", args: [7n, 6n] })
    expect(await revertOf(disperseEther(recipients, amounts, 5n))).toEqual({ errorName: "WrongValue", args: [5n, 6n] })
    expect(await revertOf(disperseEther(recipients, [1n, 2n], 3n))).toEqual({
      errorName: "LengthMismatch",
      args: [3n, 2n]
    })
  })

  it("fails as a whole when one ETH recipient refuses payment", async () => {
    // The TestToken has no receive function, so paying it ETH reverts.
    const first = freshAddress()
    const failure = await revertOf(disperseEther([first, token], [1n, 1n], 2n))
    expect(failure).toEqual({ errorName: "EtherTransferFailed", args: [1n, "0x"] })
  })

  it("pays a token to 3 recipients with the exact amounts, out of the sender's approval", async () => {
    const recipients = [freshAddress(), freshAddress(), freshAddress()]
    const amounts = [1n, 250_000n, 33_333n]
    await approveDisperse(283_334n)
    const before = await tokenBalance(token, sender.address)

    const { request } = await disperseToken(token, recipients, amounts)
    expect((await local.receipt(await local.walletFor(sender).writeContract(request))).status).toBe("success")

    expect(await Promise.all(recipients.map((recipient) => tokenBalance(token, recipient)))).toEqual(amounts)
    expect(await tokenBalance(token, sender.address)).toBe(before - 283_334n)
    expect(await tokenBalance(token, local.contracts.disperse)).toBe(0n)
  })

  it("refuses token lists of different lengths, and moves nothing when one transfer fails", async () => {
    const recipients = [freshAddress(), freshAddress(), freshAddress()]
    expect(await revertOf(disperseToken(token, recipients, [1n, 2n]))).toEqual({
      errorName: "LengthMismatch",
      args: [3n, 2n]
    })

    await approveDisperse(10n)
    const failure = await revertOf(disperseToken(token, recipients, [4n, 5n, 2n]))
    expect(failure.errorName).toBe("TokenTransferFailed")
    expect(failure.args[0]).toBe(2n)
    const reason = failure.args[1]
    if (!isHex(reason)) throw new Error(`reason is not hex: ${String(reason)}`)
    expect(decodeErrorResult({ abi: testTokenArtifact.abi, data: reason })).toMatchObject({
      errorName: "InsufficientAllowance",
      args: [local.contracts.disperse, 1n, 2n]
    })

    // Mined anyway: the first two transfers are undone with the third.
    const receipt = await local.receipt(
      await local.walletFor(sender).writeContract({
        address: local.contracts.disperse,
        abi: disperseArtifact.abi,
        functionName: "disperseToken",
        args: [token, recipients, [4n, 5n, 2n]],
        gas: 500_000n
      })
    )
    expect(receipt.status).toBe("reverted")
    expect(await Promise.all(recipients.map((recipient) => tokenBalance(token, recipient)))).toEqual([0n, 0n, 0n])
  })

  it("handles tokens that return no bool, and refuses tokens that return false or have no code", async () => {
    const bytecode = compileQuirkyTokens()
    const deploy = async (code: Hex) => {
      const { contractAddress } = await local.receipt(await local.relayer.deployContract({ abi: [], bytecode: code }))
      if (!contractAddress) throw new Error("no contract address")
      return contractAddress
    }
    const noReturnToken = await deploy(bytecode.NoReturnToken)
    const falseToken = await deploy(bytecode.FalseToken)
    await local.receipt(
      await local.relayer.writeContract({
        address: noReturnToken,
        abi: quirkyTokenAbi,
        functionName: "mint",
        args: [sender.address, 100n]
      })
    )
    const recipients = [freshAddress(), freshAddress(), freshAddress()]

    const { request } = await disperseToken(noReturnToken, recipients, [10n, 20n, 30n])
    expect((await local.receipt(await local.walletFor(sender).writeContract(request))).status).toBe("success")
    const balances = await Promise.all(
      recipients.map((recipient) =>
        local.publicClient.readContract({
          address: noReturnToken,
          abi: quirkyTokenAbi,
          functionName: "balanceOf",
          args: [recipient]
        })
      )
    )
    expect(balances).toEqual([10n, 20n, 30n])

    const falseFailure = await revertOf(disperseToken(falseToken, recipients, [1n, 1n, 1n]))
    expect(falseFailure).toEqual({ errorName: "TokenTransferFailed", args: [0n, `0x${"0".repeat(64)}`] })
    const noCodeFailure = await revertOf(disperseToken(freshAddress(), recipients, [1n, 1n, 1n]))
    expect(noCodeFailure).toEqual({ errorName: "TokenTransferFailed", args: [0n, "0x"] })
  })
})
