import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { type Address, getAddress, type Hex, type LocalAccount, numberToHex } from "viem"
import { maxPaymasterGas } from "./paymasterService"
import type { SafeOperationFields } from "./safeSignature"
import {
  sponsorWithVerifyingPaymaster,
  verifyingPaymasterStub,
  verifyingPaymasterValidationGas
} from "./verifyingPaymaster"

// The serving side of ERC-7677 for the operator's VerifyingPaymaster (`walletgate paymaster serve`): stub data for any
// well-formed operation of a known app, the signed sponsorship within the app's gas per window. Transport-free: the
// CLI puts it behind HTTP.

/** What {@link makePaymasterServer} serves with. */
export interface PaymasterServerOptions {
  readonly chainId: number
  /** The EntryPoint v0.7 the paymaster serves; any other is refused. */
  readonly entryPoint: Address
  /** The operator's VerifyingPaymaster. */
  readonly paymaster: Address
  /** Its verifying signer (the networks file's `signerKey`). */
  readonly signer: LocalAccount
  /** The apps it sponsors (the `app` of a request's context) and the gas each may use per window. */
  readonly apps: ReadonlyMap<string, bigint>
  readonly windowSeconds: number
  /** Now, in milliseconds (the window's clock). */
  readonly now?: () => number
}

/** A JSON-RPC 2.0 answer. */
export type JsonRpcAnswer =
  | { readonly jsonrpc: "2.0"; readonly id: unknown; readonly result: unknown }
  | {
      readonly jsonrpc: "2.0"
      readonly id: unknown
      readonly error: { readonly code: number; readonly message: string }
    }

/** JSON-RPC codes the server answers: the request is not one it serves, or the app may not be sponsored. */
export const paymasterServerCodes = {
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  /** The context names no app this server sponsors. */
  unknownApp: -32001,
  /** The app's gas of this window is spent. */
  budgetSpent: -32002
} as const

const hexQuantity = (digits: number) =>
  Schema.String.check(Schema.isPattern(new RegExp(`^0x(?:0|[1-9a-fA-F][0-9a-fA-F]{0,${digits - 1}})$`)))
const hexBytes = (maxBytes: number) =>
  Schema.String.check(Schema.isPattern(new RegExp(`^0x(?:[0-9a-fA-F]{2}){0,${maxBytes}}$`)))
const AddressHex = Schema.String.check(Schema.isPattern(/^0x[0-9a-fA-F]{40}$/))

/** A v0.7 operation as ERC-7677 sends it, every field bounded (gas as uint128, call data at most 64 KiB). */
const RpcOperation = Schema.Struct({
  sender: AddressHex,
  nonce: hexQuantity(64),
  factory: Schema.optionalKey(AddressHex),
  factoryData: Schema.optionalKey(hexBytes(8_192)),
  callData: hexBytes(65_536),
  callGasLimit: Schema.optionalKey(hexQuantity(32)),
  verificationGasLimit: Schema.optionalKey(hexQuantity(32)),
  preVerificationGas: Schema.optionalKey(hexQuantity(32)),
  maxFeePerGas: hexQuantity(32),
  maxPriorityFeePerGas: hexQuantity(32),
  paymasterVerificationGasLimit: Schema.optionalKey(hexQuantity(32)),
  paymasterPostOpGasLimit: Schema.optionalKey(hexQuantity(32))
})

const Params = Schema.Tuple([
  RpcOperation,
  AddressHex,
  hexQuantity(16),
  Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
])

const Request = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.optionalKey(Schema.Union([Schema.String, Schema.Number, Schema.Null])),
  method: Schema.String,
  params: Schema.optionalKey(Schema.Unknown)
})

/**
 * An ERC-7677 server for the operator's VerifyingPaymaster: `pm_getPaymasterStubData` answers the stub (not final) for
 * a known app with gas left; `pm_getPaymasterData` signs the sponsorship of the operation as given (its gas limits all
 * set) and counts its gas ceiling against the app's window, before signing. Apps are named by `context.app`; the
 * counts are this process's (one server per network).
 */
export const makePaymasterServer = (options: PaymasterServerOptions) => {
  const now = options.now ?? Date.now
  const used = new Map<string, { window: number; gas: bigint }>()
  const windowOf = () => Math.floor(now() / (options.windowSeconds * 1_000))
  const usedBy = (app: string) => {
    const entry = used.get(app)
    return entry === undefined || entry.window !== windowOf() ? 0n : entry.gas
  }

  const fail = (id: unknown, code: number, message: string): JsonRpcAnswer => ({
    jsonrpc: "2.0",
    id,
    error: { code, message }
  })

  const handle = async (body: unknown): Promise<JsonRpcAnswer> => {
    const request = Schema.decodeUnknownResult(Request)(body)
    if (Result.isFailure(request)) return fail(null, paymasterServerCodes.invalidRequest, "invalid request")
    const { id = null, method } = request.success
    if (method !== "pm_getPaymasterStubData" && method !== "pm_getPaymasterData") {
      return fail(id, paymasterServerCodes.methodNotFound, "method not found")
    }
    const params = Schema.decodeUnknownResult(Params)(request.success.params)
    if (Result.isFailure(params)) return fail(id, paymasterServerCodes.invalidParams, "invalid params")
    const [op, entryPoint, chainId, context] = params.success
    if (getAddress(entryPoint) !== getAddress(options.entryPoint)) {
      return fail(id, paymasterServerCodes.invalidParams, "unsupported EntryPoint: only v0.7")
    }
    if (BigInt(chainId) !== BigInt(options.chainId)) {
      return fail(id, paymasterServerCodes.invalidParams, `unsupported chain: this paymaster serves ${options.chainId}`)
    }
    const app = typeof context?.app === "string" ? context.app : undefined
    const allowance = app === undefined ? undefined : options.apps.get(app)
    if (app === undefined || allowance === undefined) {
      return fail(id, paymasterServerCodes.unknownApp, "unknown app: the context's app is not sponsored here")
    }
    const left = allowance - usedBy(app)
    if (left <= 0n) return fail(id, paymasterServerCodes.budgetSpent, "the app's gas of this window is spent")

    if (method === "pm_getPaymasterStubData") {
      const stub = verifyingPaymasterStub(options.paymaster, { validUntil: 0, validAfter: 0 })
      return {
        jsonrpc: "2.0",
        id,
        result: {
          paymaster: stub.paymaster,
          paymasterData: stub.paymasterData,
          paymasterVerificationGasLimit: numberToHex(stub.paymasterVerificationGasLimit),
          paymasterPostOpGasLimit: numberToHex(stub.paymasterPostOpGasLimit),
          isFinal: false
        }
      }
    }
    const { callGasLimit, verificationGasLimit, preVerificationGas } = op
    if (callGasLimit === undefined || verificationGasLimit === undefined || preVerificationGas === undefined) {
      return fail(id, paymasterServerCodes.invalidParams, "invalid params: the operation's gas limits are required")
    }
    const verificationGas =
      op.paymasterVerificationGasLimit === undefined
        ? verifyingPaymasterValidationGas
        : BigInt(op.paymasterVerificationGasLimit)
    if (verificationGas > maxPaymasterGas) {
      return fail(id, paymasterServerCodes.invalidParams, "invalid params: paymaster validation gas too high")
    }
    const fields: SafeOperationFields = {
      sender: getAddress(op.sender),
      nonce: BigInt(op.nonce),
      ...(op.factory === undefined
        ? {}
        : { factory: getAddress(op.factory), factoryData: (op.factoryData ?? "0x") as Hex }),
      callData: op.callData as Hex,
      callGasLimit: BigInt(callGasLimit),
      verificationGasLimit: BigInt(verificationGasLimit),
      preVerificationGas: BigInt(preVerificationGas),
      maxFeePerGas: BigInt(op.maxFeePerGas),
      maxPriorityFeePerGas: BigInt(op.maxPriorityFeePerGas)
    }
    const gas = fields.callGasLimit + fields.verificationGasLimit + fields.preVerificationGas + verificationGas
    if (gas > left) return fail(id, paymasterServerCodes.budgetSpent, "the app's gas of this window is spent")
    // Counted before signing: a signature handed out may be used, whatever happens to the operation afterwards.
    used.set(app, { window: windowOf(), gas: usedBy(app) + gas })
    const signed = await sponsorWithVerifyingPaymaster(fields, {
      paymaster: options.paymaster,
      signer: options.signer,
      chainId: options.chainId,
      window: { validUntil: 0, validAfter: 0 },
      paymasterVerificationGasLimit: verificationGas
    })
    return {
      jsonrpc: "2.0",
      id,
      result: {
        paymaster: signed.paymaster,
        paymasterData: signed.paymasterData,
        paymasterVerificationGasLimit: numberToHex(signed.paymasterVerificationGasLimit),
        paymasterPostOpGasLimit: numberToHex(signed.paymasterPostOpGasLimit)
      }
    }
  }

  return {
    /** Answers one JSON-RPC request (already parsed JSON). */
    handle,
    /** The gas `app` used in the current window. */
    usedBy
  }
}
