import { embeddedPorts, type Gateway, type GatewayPorts, makeGateway, type SweeperOptions } from "@walletgate/core"
import { deployTestToken, sweeperArtifact, testTokenArtifact } from "@walletgate/core/devnet"
import { Layer } from "effect"
import {
  type Account,
  type Address,
  getAddress,
  type Hash,
  type LocalAccount,
  type TransactionReceipt,
  toHex
} from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { type RpcProxy, startRpcProxy } from "../devnet/rpcProxy"
import { devAccount, devnetWallet, sharedDevnet } from "../devnet/shared"

/** A new account with nothing on the chain. */
export const freshAccount = (): LocalAccount => privateKeyToAccount(generatePrivateKey())

/** An answer of the gateway, its body parsed (`undefined` when empty). */
export interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: unknown
  readonly raw: string
}

/** A gateway of the tests and a way to call it. */
export interface TestGateway {
  readonly gateway: Gateway
  readonly call: (
    method: string,
    path: string,
    headers?: Record<string, string>,
    remoteAddress?: string
  ) => Promise<Answer>
  readonly get: (path: string, headers?: Record<string, string>, remoteAddress?: string) => Promise<Answer>
}

/** Sends neutral requests to `gateway`, from `remoteAddress` when given (else from a client the host cannot name). */
export const caller = (gateway: Gateway): TestGateway => {
  const call = async (
    method: string,
    path: string,
    headers: Record<string, string> = {},
    remoteAddress?: string
  ): Promise<Answer> => {
    const response = await gateway.handle({
      method,
      path,
      query: new URLSearchParams(),
      headers,
      ...(remoteAddress === undefined ? {} : { remoteAddress })
    })
    return {
      status: response.status,
      // No lookup answers a field more than once: one string per name.
      headers: Object.fromEntries(Object.entries(response.headers).map(([name, value]) => [name, String(value)])),
      body: response.body === "" ? undefined : JSON.parse(response.body),
      raw: response.body
    }
  }
  return { gateway, call, get: (path, headers, remoteAddress) => call("GET", path, headers, remoteAddress) }
}

/**
 * The worker's devnet with a Sweeper of this file's own (operator dev account 1, 2.5 % to dev account 9), a
 * round-trip counter in front of the node for the gateways, and helpers that act on the chain directly (not through
 * the counter). The gateways index from the block the Sweeper was deployed in: earlier blocks are other files'.
 */
export const startSweeperChain = async () => {
  const devnet = await sharedDevnet()
  const counter: RpcProxy = await startRpcProxy(devnet.anvil.rpcUrl)
  const { publicClient } = devnet
  const walletFor = (account: Account) => devnetWallet(devnet, account)
  const deployer = walletFor(devAccount(0))
  const mined = async (hash: Hash): Promise<TransactionReceipt> => {
    const receipt = await publicClient.waitForTransactionReceipt({ hash })
    if (receipt.status !== "success") throw new Error(`transaction ${hash} reverted`)
    return receipt
  }
  const deployed = await mined(
    await deployer.deployContract({
      ...sweeperArtifact,
      args: [devAccount(1).address, devAccount(9).address, 250n]
    })
  )
  if (deployed.contractAddress == null) throw new Error("the sweeper was not deployed")
  const contracts = { ...devnet.network.contracts, sweeper: getAddress(deployed.contractAddress) }
  const fromBlock = deployed.blockNumber
  const network = { ...devnet.network, contracts }
  const anvil = devnet.anvilRequest
  const gateways: Array<Gateway> = []

  return {
    devnet,
    counter,
    publicClient,
    contracts,
    /** The first block the gateways index. */
    fromBlock,
    deployToken: (symbol: string, decimals: number) =>
      deployTestToken(deployer, publicClient, { name: `${symbol} token`, symbol, decimals }),
    mint: async (token: Address, to: Address, amount: bigint) =>
      mined(
        await deployer.writeContract({
          address: token,
          abi: testTokenArtifact.abi,
          functionName: "mint",
          args: [to, amount]
        })
      ),
    approve: async (holder: Account, token: Address, amount: bigint) =>
      mined(
        await walletFor(holder).writeContract({
          address: token,
          abi: testTokenArtifact.abi,
          functionName: "approve",
          args: [contracts.sweeper, amount]
        })
      ),
    /** Posts `rate` (wei per 10^18 base units) for `token`, as the sweeper's operator. */
    setRate: async (token: Address, rate: bigint) =>
      mined(
        await walletFor(devAccount(1)).writeContract({
          address: contracts.sweeper,
          abi: sweeperArtifact.abi,
          functionName: "setRate",
          args: [token, rate]
        })
      ),
    /** The taker (dev account 3) takes `amount` of `token` from `holder`, paying `value` wei. */
    sweep: async (token: Address, holder: Address, amount: bigint, value: bigint) =>
      mined(
        await walletFor(devAccount(3)).writeContract({
          address: contracts.sweeper,
          abi: sweeperArtifact.abi,
          functionName: "sweep",
          args: [token, holder, amount],
          value
        })
      ),
    /** Sends a raw JSON-RPC request to anvil (`evm_increaseTime`, `anvil_setBalance`…). */
    anvil,
    setBalance: (address: Address, wei: bigint) => anvil("anvil_setBalance", [address, toHex(wei)]),
    mine: (blocks = 1) => anvil("anvil_mine", [toHex(blocks)]),
    /** The ISO 8601 time of a block, read from the node. */
    blockTime: async (blockNumber: bigint) =>
      new Date(Number((await publicClient.getBlock({ blockNumber })).timestamp) * 1000).toISOString(),
    /** A gateway reading the chain through the counter, with these lookups and, optionally, more ports on top. */
    gateway: <P extends GatewayPorts = never>(
      sweeper: Omit<SweeperOptions, "network">,
      ports?: Layer.Layer<P>
    ): TestGateway => {
      const base = embeddedPorts({
        networks: [{ ...network, rpcUrl: counter.url }],
        sweeper: { network: network.slug, fromBlock, ...sweeper }
      })
      const gateway = makeGateway({ ports: ports === undefined ? base : Layer.merge(base, ports), loggers: [] })
      gateways.push(gateway)
      return caller(gateway)
    },
    stop: async () => {
      await Promise.all(gateways.map((gateway) => gateway.dispose()))
      await counter.stop()
    }
  }
}

/** The chain of the sweeper tests. */
export type SweeperChain = Awaited<ReturnType<typeof startSweeperChain>>
