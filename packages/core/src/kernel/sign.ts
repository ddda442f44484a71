import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type Hash, hashMessage, hashTypedData, type TypedDataDefinition } from "viem"
import { AppAuth } from "../auth/AppAuth"
import { UnsupportedChain } from "../chain/errors"
import { ChainParam, type Network, Networks, rpc } from "../chain/networks"
import { decoderOf, documented, routeWithBody } from "../http/route"
import { KeyVault } from "../operations/KeyVault"
import { identitySafe } from "../operations/safeAccount"
import { signSafeHash } from "../operations/safeSignature"
import { UserIdParam } from "./schemas"

/**
 * EIP-712 typed data as clients send it: viem's and `eth_signTypedData_v4`'s `{domain, types, primaryType, message}`,
 * or ethers' `{domain, types, value}` without `primaryType` (then the one type no other type refers to).
 */
const TypedDataInput = Schema.Struct({
  domain: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  types: Schema.Record(Schema.String, Schema.Array(Schema.Struct({ name: Schema.String, type: Schema.String }))),
  primaryType: Schema.optionalKey(Schema.String),
  message: Schema.optionalKey(Schema.Unknown),
  value: Schema.optionalKey(Schema.Unknown)
})
type TypedDataInput = typeof TypedDataInput.Type

/** The typed data of a request, or `undefined` when it does not hash (unknown types, a value of the wrong type). */
const typedDataOf = (input: TypedDataInput): TypedDataDefinition | undefined => {
  const types = Object.fromEntries(Object.entries(input.types).filter(([name]) => name !== "EIP712Domain"))
  const referenced = new Set(
    Object.values(types).flatMap((fields) => fields.map((field) => field.type.replace(/\[\d*\]$/, "")))
  )
  const roots = Object.keys(types).filter((name) => !referenced.has(name))
  const primaryType = input.primaryType ?? (roots.length === 1 ? roots[0] : undefined)
  if (primaryType === undefined) return undefined
  const definition = {
    domain: input.domain ?? {},
    types,
    primaryType,
    message: input.message ?? input.value
  } as TypedDataDefinition
  try {
    hashTypedData(definition)
    return definition
  } catch {
    return undefined
  }
}

const exactlyOne = (request: { readonly hash?: unknown; readonly string?: unknown; readonly typedData?: unknown }) =>
  [request.hash, request.string, request.typedData].filter((part) => part !== undefined).length === 1

/** Body of `POST /v1/kernel/sign`: what to sign (one of `hash`, `string`, `typedData`) for whose wallet. */
export const SignRequest = Schema.Struct({
  userId: UserIdParam,
  /** The network whose wallet signs; default: typed data's `domain.chainId`, else the gateway's first network. */
  chain: Schema.optionalKey(ChainParam),
  auth: Schema.optionalKey(
    Schema.String.check(Schema.isMaxLength(8192, { message: "Expected at most 8192 characters" }))
  ),
  /** A 32-byte hash, signed as it is. */
  hash: Schema.optionalKey(
    Schema.String.check(Schema.isPattern(/^0x[0-9a-fA-F]{64}$/, { message: "Expected 0x and 64 hex digits" }))
  ),
  /** A message, signed as EIP-191 (`personal_sign`). */
  string: Schema.optionalKey(
    Schema.String.check(Schema.isMaxLength(16_384, { message: "Expected at most 16384 characters" }))
  ),
  /** EIP-712 typed data. */
  typedData: Schema.optionalKey(
    TypedDataInput.check(
      Schema.makeFilter((input: TypedDataInput) => typedDataOf(input) !== undefined, {
        message: "Expected EIP-712 typed data whose message matches its types"
      })
    )
  )
}).check(Schema.makeFilter(exactlyOne, { message: "Expected exactly one of hash, string and typedData" }))
/** Body of `POST /v1/kernel/sign`. */
export type SignRequest = typeof SignRequest.Type

/** Answer of `POST /v1/kernel/sign`: the hash signed, the wallet's signature of it, and what was asked. */
export const SignResponse = Schema.Struct({
  hash: Schema.String,
  signature: Schema.String,
  type: Schema.Literals(["hash", "string", "typedData"]),
  account: Schema.String,
  chain: Schema.String
})

const decodeSign = decoderOf(SignRequest, { exact: true })

/** What to sign: the hash, and the kind asked for. */
const digestOf = (request: SignRequest): { readonly hash: Hash; readonly type: "hash" | "string" | "typedData" } => {
  if (request.hash !== undefined) return { hash: request.hash as Hash, type: "hash" }
  if (request.string !== undefined) return { hash: hashMessage(request.string), type: "string" }
  // The schema let the request through only with exactly one part, and typed data that hashes.
  const definition = typedDataOf(request.typedData as TypedDataInput) as TypedDataDefinition
  return { hash: hashTypedData(definition), type: "typedData" }
}

/**
 * The chain a signature is for, as asked: the one named, else typed data's `domain.chainId`; `undefined` for
 * neither (the first network served).
 */
const chainAsked = (request: SignRequest): string | undefined => {
  if (request.chain !== undefined) return request.chain
  const chainId = request.typedData?.domain?.chainId
  return typeof chainId === "number" || typeof chainId === "string" || typeof chainId === "bigint"
    ? String(chainId)
    : undefined
}

/**
 * `POST /v1/kernel/sign`: the user's wallet signs a hash, an EIP-191 message or EIP-712 typed data, authorised like
 * `POST /v1/kernel/tx`. The signature is the Safe's (ERC-1271; wrapped by ERC-6492 while the Safe is not deployed),
 * so viem's `verifyHash` / `verifyMessage` / `verifyTypedData` accept it against the wallet's address either way.
 */
export const signRoute = documented(
  routeWithBody(
    "POST",
    "/v1/kernel/sign",
    Schema.Unknown,
    Effect.fnUntraced(function* (body, context) {
      const appAuth = yield* AppAuth
      const app = yield* appAuth.authenticate(context.request.headers.authorization)
      const request = yield* decodeSign(body)
      const networks = yield* Networks
      const chain = chainAsked(request)
      const network: Network | undefined = chain === undefined ? networks.all[0] : networks.resolve(chain)
      if (network === undefined) return yield* new UnsupportedChain({ chain: chain ?? "" })
      const identity = yield* appAuth.authorise(app, request.userId, request.auth ?? "", network)
      const owner = yield* (yield* KeyVault).owner(identity)
      const account = identitySafe(owner.address, identity)
      const code = yield* rpc(network, "getCode", () => network.publicClient.getCode({ address: account.address }))
      const { hash, type } = digestOf(request)
      const signature = yield* Effect.promise(() =>
        signSafeHash(account, hash, {
          chainId: network.chainId,
          signers: [owner],
          state: code === undefined || code === "0x" ? "counterfactual" : "deployed"
        })
      )
      const answer: typeof SignResponse.Type = { hash, signature, type, account: account.address, chain: network.slug }
      return { status: 200, body: answer }
    })
  ),
  {
    summary: "Signs a hash, a message or typed data with a user's wallet (ERC-1271, ERC-6492 before deployment).",
    security: "bearer",
    body: SignRequest,
    answers: [{ status: 200, description: "The signature.", schema: SignResponse }]
  }
)
