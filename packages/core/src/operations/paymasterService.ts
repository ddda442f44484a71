import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { type Address, getAddress, type Hex, numberToHex } from "viem"
import { formatUserOperationRequest } from "viem/account-abstraction"
import type { PaymasterServiceConfig } from "../chain/networks"
import { PaymasterUnavailable, SponsorshipRefused } from "./errors"
import { paymasterServiceOutcome } from "./outcomes"
import type { SafeOperationFields } from "./safeSignature"
import type { PaymasterFields } from "./verifyingPaymaster"

// The gateway's side of ERC-7677 (paymaster web services, EntryPoint v0.7): `pm_getPaymasterStubData` before the gas
// is estimated, `pm_getPaymasterData` once it is final and the spend policy reserved it. Everything the service answers
// is bounded and checked here, before any of it reaches an operation (docs/security.md).

/** The errors of asking a paymaster service. */
export type PaymasterServiceError = PaymasterUnavailable | SponsorshipRefused

/** The most bytes of a service's answer read; a longer one is malformed. */
const maxPaymasterAnswerBytes = 16_384

/** The most bytes of `paymasterData` taken from a service (the VerifyingPaymaster's is 129). */
const maxPaymasterDataBytes = 2_048

/** The most gas a service may ask for a paymaster's validation or post-operation. */
export const maxPaymasterGas = 1_000_000n

/** The most bytes of a configured `context` once serialised. */
const maxPaymasterContextBytes = 4_096

const AddressHex = Schema.String.check(Schema.isPattern(/^0x[0-9a-fA-F]{40}$/, { message: "Expected an address" }))

const DataHex = Schema.String.check(
  Schema.isPattern(new RegExp(`^0x(?:[0-9a-fA-F]{2}){0,${maxPaymasterDataBytes}}$`), {
    message: `Expected hex bytes, at most ${maxPaymasterDataBytes}`
  })
)

/** A gas quantity in hex, at most {@link maxPaymasterGas}. */
const GasHex = Schema.String.check(
  Schema.isPattern(/^0x(?:0|[1-9a-fA-F][0-9a-fA-F]{0,15})$/, { message: "Expected a hex quantity" }),
  Schema.makeFilter((value: string) => BigInt(value) <= maxPaymasterGas, {
    message: `Expected at most ${maxPaymasterGas} gas`
  })
)

/** A v0.7 answer of `pm_getPaymasterStubData`; `paymasterPostOpGasLimit` is required for v0.7 (the paymaster pays it). */
const StubAnswer = Schema.Struct({
  paymaster: AddressHex,
  paymasterData: DataHex,
  paymasterVerificationGasLimit: Schema.optionalKey(GasHex),
  paymasterPostOpGasLimit: GasHex,
  isFinal: Schema.optionalKey(Schema.Boolean)
})

/** A v0.7 answer of `pm_getPaymasterData`; gas limits, when given, may only lower the stub's (the reservation). */
const FinalAnswer = Schema.Struct({
  paymaster: AddressHex,
  paymasterData: DataHex,
  paymasterVerificationGasLimit: Schema.optionalKey(GasHex),
  paymasterPostOpGasLimit: Schema.optionalKey(GasHex)
})

const RpcError = Schema.Struct({ code: Schema.Int, message: Schema.String })

/** The stub data of a service: what the operation is estimated with. */
export interface PaymasterStub {
  readonly fields: PaymasterFields
  /** Whether the service named the validation gas (else the bundler's estimate is used). */
  readonly verificationGasGiven: boolean
  /** The service says the stub is already the final data: no `pm_getPaymasterData`. */
  readonly isFinal: boolean
}

/** A paymaster service, asked for one network. */
export interface PaymasterServiceClient {
  /** `pm_getPaymasterStubData` for the unsigned operation (no gas limits yet). */
  readonly stubData: (op: SafeOperationFields) => Effect.Effect<PaymasterStub, PaymasterServiceError>
  /**
   * `pm_getPaymasterData` for the operation with its final gas and the stub's paymaster and gas: the final fields,
   * refused as malformed when they name another paymaster or raise a gas limit above the stub's.
   */
  readonly finalData: (
    op: SafeOperationFields,
    stub: PaymasterFields
  ) => Effect.Effect<PaymasterFields, PaymasterServiceError>
}

/** The unsigned operation as ERC-7677 sends it: JSON-RPC form, no signature. */
const rpcOperation = (op: SafeOperationFields) => formatUserOperationRequest({ ...op })

/** Reads at most `max` bytes of `response`'s body; undefined when it is longer. */
const readBounded = async (response: Response, max: number): Promise<string | undefined> => {
  const reader = response.body?.getReader()
  if (reader === undefined) return ""
  const parts: Array<Uint8Array> = []
  let size = 0
  while (true) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > max) {
      await reader.cancel().catch(() => undefined)
      return undefined
    }
    parts.push(value)
  }
  return new TextDecoder().decode(Buffer.concat(parts))
}

/** A service's message as it may be shown: printable ASCII, at most 120 characters. */
const printable = (message: string): string => message.replace(/[^\x20-\x7e]/g, "?").slice(0, 120)

/**
 * The client of the ERC-7677 service `config` for `network` (slug, chain id) at `entryPoint`: each call one HTTP POST,
 * no redirect followed, within the timeout, its answer at most {@link maxPaymasterAnswerBytes} and checked field by
 * field (addresses, hex lengths, gas within {@link maxPaymasterGas}). A JSON-RPC error is the service's refusal
 * (`SponsorshipRefused`) unless its code says the service itself failed (`operationOutcomes`); anything else is
 * `PaymasterUnavailable`.
 */
export const paymasterServiceClient = (
  network: { readonly slug: string; readonly chainId: number },
  entryPoint: Address,
  config: PaymasterServiceConfig
): PaymasterServiceClient => {
  const timeoutMs = config.timeoutMs ?? 10_000
  const unavailable = (cause: string) => new PaymasterUnavailable({ network: network.slug, cause })

  const ask = (method: string, op: Record<string, unknown>) =>
    Effect.tryPromise({
      try: async (signal) => {
        const response = await fetch(config.url, {
          method: "POST",
          redirect: "error",
          headers: { "content-type": "application/json", accept: "application/json" },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method,
            params: [op, entryPoint, numberToHex(network.chainId), config.context ?? {}]
          }),
          signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])
        })
        return { status: response.status, text: await readBounded(response, maxPaymasterAnswerBytes) }
      },
      catch: (error) =>
        unavailable(
          `${method}: ${error instanceof Error && error.name === "TimeoutError" ? `no answer within ${timeoutMs} ms` : "unreachable"}`
        )
    }).pipe(
      Effect.flatMap(({ status, text }) => {
        if (text === undefined)
          return Effect.fail(unavailable(`${method}: answer above ${maxPaymasterAnswerBytes} bytes`))
        let json: unknown
        try {
          json = JSON.parse(text)
        } catch {
          return Effect.fail(unavailable(`${method}: HTTP ${status}, not JSON`))
        }
        const envelope = typeof json === "object" && json !== null && !Array.isArray(json) ? json : {}
        if ("error" in envelope) {
          const error = Schema.decodeUnknownResult(RpcError)(envelope.error)
          if (Result.isFailure(error)) return Effect.fail(unavailable(`${method}: a malformed JSON-RPC error`))
          const { code, message } = error.success
          return Effect.fail(
            paymasterServiceOutcome(code) === "sponsorship_refused"
              ? new SponsorshipRefused({ network: network.slug, code, message: printable(message) })
              : unavailable(`${method}: error ${code}: ${printable(message)}`)
          )
        }
        if (status < 200 || status > 299 || !("result" in envelope)) {
          return Effect.fail(unavailable(`${method}: HTTP ${status}, no JSON-RPC result`))
        }
        return Effect.succeed(envelope.result)
      })
    )

  const decode =
    <S extends Schema.Decoder<unknown>>(method: string, schema: S) =>
    (result: unknown) => {
      const decoded = Schema.decodeUnknownResult(schema)(result)
      return Result.isFailure(decoded)
        ? Effect.fail(unavailable(`${method}: malformed result`))
        : Effect.succeed(decoded.success as S["Type"])
    }

  return {
    stubData: (op) =>
      ask("pm_getPaymasterStubData", rpcOperation(op)).pipe(
        Effect.flatMap(decode("pm_getPaymasterStubData", StubAnswer)),
        Effect.map((answer) => ({
          fields: {
            paymaster: getAddress(answer.paymaster),
            paymasterData: answer.paymasterData as Hex,
            paymasterVerificationGasLimit: BigInt(answer.paymasterVerificationGasLimit ?? 0),
            paymasterPostOpGasLimit: BigInt(answer.paymasterPostOpGasLimit)
          },
          verificationGasGiven: answer.paymasterVerificationGasLimit !== undefined,
          isFinal: answer.isFinal === true
        }))
      ),
    finalData: (op, stub) =>
      ask(
        "pm_getPaymasterData",
        rpcOperation({
          ...op,
          paymaster: stub.paymaster,
          paymasterVerificationGasLimit: stub.paymasterVerificationGasLimit,
          paymasterPostOpGasLimit: stub.paymasterPostOpGasLimit
        })
      ).pipe(
        Effect.flatMap(decode("pm_getPaymasterData", FinalAnswer)),
        Effect.flatMap((answer) => {
          const final: PaymasterFields = {
            paymaster: getAddress(answer.paymaster),
            paymasterData: answer.paymasterData as Hex,
            paymasterVerificationGasLimit:
              answer.paymasterVerificationGasLimit === undefined
                ? stub.paymasterVerificationGasLimit
                : BigInt(answer.paymasterVerificationGasLimit),
            paymasterPostOpGasLimit:
              answer.paymasterPostOpGasLimit === undefined
                ? stub.paymasterPostOpGasLimit
                : BigInt(answer.paymasterPostOpGasLimit)
          }
          // The operation was estimated with the stub's paymaster and its gas reserved with the stub's limits.
          if (final.paymaster !== stub.paymaster) {
            return Effect.fail(unavailable("pm_getPaymasterData: another paymaster than the stub's"))
          }
          if (
            final.paymasterVerificationGasLimit > stub.paymasterVerificationGasLimit ||
            final.paymasterPostOpGasLimit > stub.paymasterPostOpGasLimit
          ) {
            return Effect.fail(unavailable("pm_getPaymasterData: gas limits above those reserved"))
          }
          return Effect.succeed(final)
        })
      )
  }
}

/** The checks of a configured service URL: https, or http to this machine; at most 2,048 characters. */
export const paymasterServiceUrlProblem = (text: string): string | undefined => {
  if (text.length > 2_048) return "at most 2048 characters"
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return "not a URL"
  }
  if (url.protocol === "https:") return undefined
  if (url.protocol === "http:" && ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname)) return undefined
  return "https, or http to localhost"
}

/** The check of a configured `context`: a JSON object of at most {@link maxPaymasterContextBytes} bytes serialised. */
export const paymasterContextProblem = (context: unknown): string | undefined => {
  if (typeof context !== "object" || context === null || Array.isArray(context)) return "a JSON object"
  const text = JSON.stringify(context)
  return Buffer.byteLength(text) > maxPaymasterContextBytes
    ? `at most ${maxPaymasterContextBytes} bytes as JSON`
    : undefined
}
