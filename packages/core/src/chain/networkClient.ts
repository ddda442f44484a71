import { type Chain, type Client, createClient, type PublicActions, type PublicRpcSchema, type Transport } from "viem"
import {
  estimateMaxPriorityFeePerGas,
  getBalance,
  getBlock,
  getBlockNumber,
  getCode,
  getLogs,
  getTransactionReceipt,
  multicall,
  readContract,
  simulateBlocks
} from "viem/actions"
import { tracedPromise } from "../internal/telemetry"

/**
 * The reads the gateway makes of a network's node: viem's public actions of these names, and no others (a bundle
 * holds only the actions its clients are built with).
 */
export type NetworkReads = Pick<
  PublicActions<Transport, Chain>,
  | "estimateMaxPriorityFeePerGas"
  | "getBalance"
  | "getBlock"
  | "getBlockNumber"
  | "getCode"
  | "getLogs"
  | "getTransactionReceipt"
  | "multicall"
  | "readContract"
  | "simulateBlocks"
>

/** A viem client of a network's node that can make the {@link NetworkReads} (and `request` any JSON-RPC method). */
export type NetworkClient = Client<Transport, Chain, undefined, PublicRpcSchema, NetworkReads>

/**
 * `transport` with each JSON-RPC request in a client span (`rpc.method`) of the Effect that made it, when spans are
 * exported; otherwise the request as it was.
 */
const tracedTransport =
  (transport: Transport): Transport =>
  (params) => {
    const built = transport(params)
    const request = built.request
    const traced: typeof request = (args, options) =>
      tracedPromise(args.method, { "rpc.system": "jsonrpc", "rpc.method": args.method }, () => request(args, options))
    return { ...built, request: traced }
  }

/**
 * The client of a network's node on `transport`, polling for receipts and blocks every `pollingInterval` ms; it never
 * follows a contract's offchain lookup (EIP-3668), which would make the gateway fetch URLs a contract names.
 */
export const createNetworkClient = (options: {
  readonly chain: Chain
  readonly transport: Transport
  readonly pollingInterval: number
}): NetworkClient =>
  createClient<Transport, Chain, undefined, PublicRpcSchema>({
    chain: options.chain,
    transport: tracedTransport(options.transport),
    pollingInterval: options.pollingInterval,
    // No EIP-3668 CCIP read: a contract the gateway reads (a token a payout names) would otherwise make it fetch the
    // URLs the contract chooses, from inside the operator's network. The gateway resolves no ENS name.
    ccipRead: false,
    key: "network",
    name: "Network Client"
  }).extend(
    (client): NetworkReads => ({
      estimateMaxPriorityFeePerGas: (args) => estimateMaxPriorityFeePerGas(client, args),
      getBalance: (args) => getBalance(client, args),
      getBlock: (args) => getBlock(client, args),
      getBlockNumber: (args) => getBlockNumber(client, args),
      getCode: (args) => getCode(client, args),
      // viem's own `publicActions` casts here too: its `getLogs` infers a wider log type than the method declares.
      getLogs: ((args) => getLogs(client, args)) as NetworkReads["getLogs"],
      getTransactionReceipt: (args) => getTransactionReceipt(client, args),
      multicall: (args) => multicall(client, args),
      readContract: (args) => readContract(client, args),
      simulateBlocks: (args) => simulateBlocks(client, args)
    })
  )
