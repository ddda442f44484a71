import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import {
  type Address,
  BaseError,
  type BundlerRpcSchema,
  createClient,
  getAddress,
  type Hash,
  type Hex,
  http,
  RpcRequestError,
  rpcSchema,
  toHex
} from "viem"
import {
  formatUserOperationGas,
  formatUserOperationReceipt,
  formatUserOperationRequest,
  type UserOperation,
  type UserOperationReceipt
} from "viem/account-abstraction"
import { bundlerErrors, count } from "../internal/telemetry"
import { BundlerBusy, BundlerRefusedSetup, BundlerRejected, BundlerUnavailable, CallReverted } from "./errors"
import { bundlerOutcome, operationOutcomes } from "./outcomes"
import { decodeRevertReason } from "./revertReason"

/** A v0.7 user operation, ready to send (signature included). */
export type UserOperation07 = UserOperation<"0.7">

/** Gas limits a bundler estimated for an operation (`eth_estimateUserOperationGas`). */
export interface UserOperationGasEstimate {
  readonly callGasLimit: bigint
  readonly verificationGasLimit: bigint
  readonly preVerificationGas: bigint
  readonly paymasterVerificationGasLimit: bigint | undefined
  readonly paymasterPostOpGasLimit: bigint | undefined
}

/** A bundler's errors, classified by `operationOutcomes`; its estimate may show the execution reverts. */
export type BundlerError = BundlerRejected | BundlerRefusedSetup | BundlerBusy | BundlerUnavailable | CallReverted

/** The ERC-7769 bundler of each network: the engine that includes user operations, their nonces and fees. */
export class Bundler extends Context.Service<
  Bundler,
  {
    /** `eth_sendUserOperation`: the operation's hash once the bundler accepted it into its mempool. */
    readonly sendUserOperation: (
      chainId: number,
      op: UserOperation07,
      entryPoint: Address
    ) => Effect.Effect<Hash, BundlerError>
    /** `eth_getUserOperationReceipt`: the receipt, or undefined while the operation is not included. */
    readonly getUserOperationReceipt: (
      chainId: number,
      hash: Hash
    ) => Effect.Effect<UserOperationReceipt | undefined, BundlerError>
    /**
     * Whether the bundler holds the operation and has not included it (in its mempool, or in a bundle not yet
     * mined), by `pimlico_getUserOperationStatus` (alto, Pimlico's hosted bundlers); false when it does not know it,
     * refused it or reports it included. A bundler without that method fails (`BundlerRejected`): the caller cannot
     * tell. (`eth_getUserOperationByHash` cannot answer this: bundlers read it from mined logs only.)
     */
    readonly isPending: (chainId: number, hash: Hash) => Effect.Effect<boolean, BundlerError>
    /** `eth_supportedEntryPoints`. */
    readonly supportedEntryPoints: (chainId: number) => Effect.Effect<ReadonlyArray<Address>, BundlerError>
    /**
     * `eth_estimateUserOperationGas` (the operation's signatures may be well-formed placeholders); with
     * `senderBalanceWei`, as if the sender held that much (a state override: a self-paid estimate of an empty account).
     */
    readonly estimateUserOperationGas: (
      chainId: number,
      op: UserOperation07,
      entryPoint: Address,
      options?: { readonly senderBalanceWei?: bigint }
    ) => Effect.Effect<UserOperationGasEstimate, BundlerError>
  }
>()("@walletgate/core/Bundler") {
  /** Bundlers reached over HTTP JSON-RPC (any ERC-7769 endpoint: a hosted one, or alto), one URL per chain id. */
  static readonly jsonRpc = (endpoints: ReadonlyArray<BundlerEndpoint>): Layer.Layer<Bundler> =>
    Layer.sync(Bundler, () => makeJsonRpcBundler(endpoints))
}

/** Where a chain's bundler answers. */
export interface BundlerEndpoint {
  readonly chainId: number
  readonly url: string
  /** How long to wait for one answer; default 10 s. */
  readonly timeoutMs?: number
}

/** The {@link Bundler} of {@link Bundler.jsonRpc}, as a plain value (for tools that run without a layer). */
export const makeJsonRpcBundler = (endpoints: ReadonlyArray<BundlerEndpoint>): Bundler["Service"] => {
  const clients = new Map(endpoints.map((endpoint) => [endpoint.chainId, bundlerClient(endpoint)]))
  const call = <A>(
    chainId: number,
    method: string,
    run: (client: ReturnType<typeof bundlerClient>) => Promise<A>
  ): Effect.Effect<A, BundlerError> => {
    const client = clients.get(chainId)
    if (client === undefined) {
      return Effect.fail(new BundlerUnavailable({ chainId, method, cause: "no bundler configured for this chain" }))
    }
    let code = "unavailable"
    return Effect.tryPromise({
      try: () => run(client),
      catch: (error) => {
        const rejected = error instanceof BaseError ? error.walk((e) => e instanceof RpcRequestError) : null
        if (rejected instanceof RpcRequestError) {
          code = String(rejected.code)
          const details = rejected.details === "" ? rejected.shortMessage : rejected.details
          return bundlerRefusal({ chainId, method, code: rejected.code, message: details })
        }
        return new BundlerUnavailable({ chainId, method, cause: describe(error) })
      }
    }).pipe(
      Effect.tapError(() => count(bundlerErrors, { code, "rpc.method": method })),
      Effect.withSpan(method, {
        kind: "client",
        attributes: { "rpc.system": "jsonrpc", "rpc.method": method, "walletgate.chain_id": chainId }
      })
    )
  }
  return Bundler.of({
    sendUserOperation: (chainId, op, entryPoint) =>
      call(chainId, "eth_sendUserOperation", (client) =>
        client.request({ method: "eth_sendUserOperation", params: [formatUserOperationRequest(op), entryPoint] })
      ),
    getUserOperationReceipt: (chainId, hash) =>
      call(chainId, "eth_getUserOperationReceipt", async (client) => {
        const receipt = await client.request({ method: "eth_getUserOperationReceipt", params: [hash] })
        return receipt === null ? undefined : formatUserOperationReceipt(receipt)
      }),
    isPending: (chainId, hash) =>
      call(chainId, "pimlico_getUserOperationStatus", async (client) => {
        const found = await client.request({ method: "pimlico_getUserOperationStatus", params: [hash] })
        return heldStatuses.has(found.status)
      }),
    supportedEntryPoints: (chainId) =>
      call(chainId, "eth_supportedEntryPoints", async (client) =>
        (await client.request({ method: "eth_supportedEntryPoints" })).map((address) => getAddress(address))
      ),
    estimateUserOperationGas: (chainId, op, entryPoint, options) =>
      call(chainId, "eth_estimateUserOperationGas", async (client) => {
        const balance = options?.senderBalanceWei
        const gas = formatUserOperationGas(
          await client.request({
            method: "eth_estimateUserOperationGas",
            params:
              balance === undefined
                ? [formatUserOperationRequest(op), entryPoint]
                : [formatUserOperationRequest(op), entryPoint, { [op.sender]: { balance: toHex(balance) } }]
          })
        )
        return {
          callGasLimit: gas.callGasLimit,
          verificationGasLimit: gas.verificationGasLimit,
          preVerificationGas: gas.preVerificationGas,
          paymasterVerificationGasLimit: gas.paymasterVerificationGasLimit,
          paymasterPostOpGasLimit: gas.paymasterPostOpGasLimit
        }
      })
  })
}

/** A bundler's JSON-RPC error as the tagged error of its row of `operationOutcomes`. */
const bundlerRefusal = (refusal: {
  readonly chainId: number
  readonly method: string
  readonly code: number
  readonly message: string
}): BundlerError => {
  const outcome = bundlerOutcome(refusal.code, refusal.message)
  switch (operationOutcomes[outcome].error) {
    case "CallReverted":
      return new CallReverted({ index: -1, reason: executionRevertReason(refusal.message) })
    case "BundlerRejected":
      return new BundlerRejected(refusal)
    case "BundlerRefusedSetup":
      return new BundlerRefusedSetup(refusal)
    case "BundlerBusy":
      return new BundlerBusy(refusal)
    default:
      return new BundlerUnavailable({
        chainId: refusal.chainId,
        method: refusal.method,
        cause: `error ${refusal.code}: ${refusal.message.slice(0, 120)}`
      })
  }
}

/** The revert reason in an estimate's "execution reverted" message: its revert data decoded, when it has some. */
const executionRevertReason = (message: string): string => {
  const data = /\b0x(?:[0-9a-fA-F]{2})+\b/.exec(message.slice(0, 4_096))?.[0]
  return data === undefined ? "execution reverted" : decodeRevertReason(data as Hex)
}

/** Pimlico's status method, which alto serves beside ERC-7769's. */
type PimlicoStatusSchema = [
  {
    Method: "pimlico_getUserOperationStatus"
    Parameters: [hash: Hash]
    ReturnType: { readonly status: string; readonly transactionHash: Hash | null }
  }
]

/** `pimlico_getUserOperationStatus` statuses of an operation the bundler holds, not yet included. */
const heldStatuses: ReadonlySet<string> = new Set(["not_submitted", "submitted", "queued"])

/**
 * A bare viem client of one bundler: its typed `request` is all the {@link Bundler} uses (viem's bundler actions
 * would bring their error decoding and `prepareUserOperation`, which the gateway does itself).
 */
const bundlerClient = (endpoint: BundlerEndpoint) =>
  createClient({
    // No retries: a retried send is the caller's decision (it re-sends the same signed operation).
    transport: http(endpoint.url, { timeout: endpoint.timeoutMs ?? 10_000, retryCount: 0 }),
    rpcSchema: rpcSchema<[...BundlerRpcSchema, ...PimlicoStatusSchema]>(),
    key: "bundler",
    name: "Bundler Client"
  })

/** The name and short message of a transport error (viem's errors carry no key). */
const describe = (error: unknown): string => {
  if (!(error instanceof Error)) return "error"
  const short = (error as { readonly shortMessage?: unknown }).shortMessage
  return typeof short === "string" ? `${error.name}: ${short}` : error.name
}
