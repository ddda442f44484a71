import {
  type Address,
  concat,
  encodeAbiParameters,
  encodeFunctionData,
  encodePacked,
  getAddress,
  getCreate2Address,
  type Hex,
  keccak256,
  size,
  zeroAddress
} from "viem"
import { entryPoint07Address } from "viem/account-abstraction"
import { type AccountIdentity, accountSalt } from "./identity"

/** The contracts a Safe 4337 account is built from on a network. */
export interface Safe4337Contracts {
  readonly entryPoint: Address
  /** The Safe implementation every account proxies to (SafeL2 1.4.1 by default). */
  readonly safeSingleton: Address
  readonly safeProxyFactory: Address
  readonly safeModuleSetup: Address
  readonly safe4337Module: Address
  readonly multiSendCallOnly: Address
}

/**
 * The canonical contracts: SafeL2 1.4.1, its factory, Safe4337Module 0.3.0 and SafeModuleSetup on EntryPoint v0.7,
 * at the addresses `@safe-global/safe-deployments` and `@safe-global/safe-modules-deployments` publish (a test
 * checks them against the registries, which are not imported here: they would weigh ≈ 420 KiB in every bundle).
 */
export const canonicalSafe4337Contracts = (): Safe4337Contracts => ({
  entryPoint: entryPoint07Address,
  safeSingleton: "0x29fcB43b46531BcA003ddC8FCB67FFE91900C762",
  safeProxyFactory: "0x4e1DCf7AD4e460CfD30791CCC4F9c8a4f820ec67",
  safeModuleSetup: "0x2dd68b007B46fBe91B9A7c3EDa5A7a1063cB5b47",
  safe4337Module: "0x75cf11467937ce3F2f357CE24ffc3DBF8fD5c226",
  multiSendCallOnly: "0x9641d764fc13c8B624c04430C7356C1C7C8102e2"
})

/**
 * SafeProxy 1.4.1's creation code (`@safe-global/safe-contracts`; a test checks it against the package's artifact):
 * with the singleton's address, what SafeProxyFactory deploys, so what a Safe's CREATE2 address is computed from.
 * Kept here so that a bundled gateway (a Lambda function) computes addresses without the package's files.
 */
export const safeProxyCreationCode: Hex =
  "0x608060405234801561001057600080fd5b506040516101e63803806101e68339818101604052602081101561003357600080fd5b8101908080519060200190929190505050600073ffffffffffffffffffffffffffffffffffffffff168173ffffffffffffffffffffffffffffffffffffffff1614156100ca576040517f08c379a00000000000000000000000000000000000000000000000000000000081526004018080602001828103825260228152602001806101c46022913960400191505060405180910390fd5b806000806101000a81548173ffffffffffffffffffffffffffffffffffffffff021916908373ffffffffffffffffffffffffffffffffffffffff1602179055505060ab806101196000396000f3fe608060405273ffffffffffffffffffffffffffffffffffffffff600054167fa619486e0000000000000000000000000000000000000000000000000000000060003514156050578060005260206000f35b3660008037600080366000845af43d6000803e60008114156070573d6000fd5b3d6000f3fea264697066735822122003d1488ee65e08fa41e58e888a9865554c535f2c77126a82cb4c0f917f31441364736f6c63430007060033496e76616c69642073696e676c65746f6e20616464726573732070726f7669646564"

/** What decides a Safe account's address: its owners, threshold and salt, on the given contracts. */
export interface SafeAccountParameters {
  /** Owner addresses; their order does not matter (they are sorted), duplicates are refused. */
  readonly owners: ReadonlyArray<Address>
  /** How many owners must sign, 1 to `owners.length`. */
  readonly threshold: number
  /** SafeProxyFactory salt nonce; 0 when absent. */
  readonly saltNonce?: bigint
  /** Canonical contracts ({@link canonicalSafe4337Contracts}) when absent. */
  readonly contracts?: Safe4337Contracts
}

/** A counterfactual Safe: its address, known before deployment, and the factory call that deploys it. */
export interface SafeAccount {
  readonly address: Address
  /** Sorted owners, as in the Safe's `setup`. */
  readonly owners: ReadonlyArray<Address>
  readonly threshold: number
  readonly contracts: Safe4337Contracts
  /** The SafeProxyFactory: with {@link SafeAccount.factoryData}, a user operation's `initCode`. */
  readonly factory: Address
  /** `createProxyWithNonce(singleton, setup(...), saltNonce)`. */
  readonly factoryData: Hex
}

// The ABIs below are written out (not `parseAbi` of their signatures): importing this module does no work.

/** `setup(address[] _owners, uint256 _threshold, address to, bytes data, address fallbackHandler, address paymentToken, uint256 payment, address paymentReceiver)` */
const safeAbi = [
  {
    type: "function",
    name: "setup",
    stateMutability: "nonpayable",
    inputs: [
      { type: "address[]", name: "_owners" },
      { type: "uint256", name: "_threshold" },
      { type: "address", name: "to" },
      { type: "bytes", name: "data" },
      { type: "address", name: "fallbackHandler" },
      { type: "address", name: "paymentToken" },
      { type: "uint256", name: "payment" },
      { type: "address", name: "paymentReceiver" }
    ],
    outputs: []
  }
] as const
/** `enableModules(address[] modules)` */
const safeModuleSetupAbi = [
  {
    type: "function",
    name: "enableModules",
    stateMutability: "nonpayable",
    inputs: [{ type: "address[]", name: "modules" }],
    outputs: []
  }
] as const
/** `createProxyWithNonce(address _singleton, bytes initializer, uint256 saltNonce) returns (address proxy)` */
const safeProxyFactoryAbi = [
  {
    type: "function",
    name: "createProxyWithNonce",
    stateMutability: "nonpayable",
    inputs: [
      { type: "address", name: "_singleton" },
      { type: "bytes", name: "initializer" },
      { type: "uint256", name: "saltNonce" }
    ],
    outputs: [{ type: "address", name: "proxy" }]
  }
] as const
/**
 * Safe4337Module's entry points that the EntryPoint calls on the Safe (through the fallback handler):
 * `executeUserOpWithErrorString(address to, uint256 value, bytes data, uint8 operation)` and
 * `getOperationHash(PackedUserOperation userOp) view returns (bytes32)`.
 */
const safe4337ModuleAbi = [
  {
    type: "function",
    name: "executeUserOpWithErrorString",
    stateMutability: "nonpayable",
    inputs: [
      { type: "address", name: "to" },
      { type: "uint256", name: "value" },
      { type: "bytes", name: "data" },
      { type: "uint8", name: "operation" }
    ],
    outputs: []
  },
  {
    type: "function",
    name: "getOperationHash",
    stateMutability: "view",
    inputs: [
      {
        type: "tuple",
        name: "userOp",
        components: [
          { type: "address", name: "sender" },
          { type: "uint256", name: "nonce" },
          { type: "bytes", name: "initCode" },
          { type: "bytes", name: "callData" },
          { type: "bytes32", name: "accountGasLimits" },
          { type: "uint256", name: "preVerificationGas" },
          { type: "bytes32", name: "gasFees" },
          { type: "bytes", name: "paymasterAndData" },
          { type: "bytes", name: "signature" }
        ]
      }
    ],
    outputs: [{ type: "bytes32" }]
  }
] as const
/** `multiSend(bytes transactions)` */
const multiSendAbi = [
  {
    type: "function",
    name: "multiSend",
    stateMutability: "nonpayable",
    inputs: [{ type: "bytes", name: "transactions" }],
    outputs: []
  }
] as const

/**
 * The Safe of `owners` with `threshold`: its address is computed locally (CREATE2 of the SafeProxyFactory over the
 * SafeProxy creation code, {@link safeProxyCreationCode}), with no RPC call. Its `setup` enables the
 * Safe4337Module through SafeModuleSetup and makes the module the fallback handler (ERC-1271 and the 4337 entry
 * points go through it). Throws on an empty, duplicated or zero owner, or a threshold out of range: a bug of the caller.
 */
export const safeAccount = (parameters: SafeAccountParameters): SafeAccount => {
  const contracts = parameters.contracts ?? canonicalSafe4337Contracts()
  const owners = [...parameters.owners].map((owner) => getAddress(owner)).sort(compareAddresses)
  if (owners.length === 0 || owners.some((owner, i) => owner === zeroAddress || owner === owners[i - 1])) {
    throw new Error("a Safe needs distinct, non-zero owners")
  }
  if (!Number.isInteger(parameters.threshold) || parameters.threshold < 1 || parameters.threshold > owners.length) {
    throw new Error(`a Safe of ${owners.length} owners needs a threshold from 1 to ${owners.length}`)
  }
  const saltNonce = parameters.saltNonce ?? 0n
  const initializer = encodeFunctionData({
    abi: safeAbi,
    functionName: "setup",
    args: [
      owners,
      BigInt(parameters.threshold),
      contracts.safeModuleSetup,
      encodeFunctionData({
        abi: safeModuleSetupAbi,
        functionName: "enableModules",
        args: [[contracts.safe4337Module]]
      }),
      contracts.safe4337Module,
      zeroAddress,
      0n,
      zeroAddress
    ]
  })
  // SafeProxyFactory 1.4.1: salt = keccak256(keccak256(initializer) ‖ saltNonce); deployment data =
  // proxyCreationCode ‖ uint256(singleton).
  const address = getCreate2Address({
    from: contracts.safeProxyFactory,
    salt: keccak256(encodePacked(["bytes32", "uint256"], [keccak256(initializer), saltNonce])),
    bytecodeHash: keccak256(
      concat([safeProxyCreationCode, encodeAbiParameters([{ type: "address" }], [contracts.safeSingleton])])
    )
  })
  return {
    address,
    owners,
    threshold: parameters.threshold,
    contracts,
    factory: contracts.safeProxyFactory,
    factoryData: encodeFunctionData({
      abi: safeProxyFactoryAbi,
      functionName: "createProxyWithNonce",
      args: [contracts.safeSingleton, initializer, saltNonce]
    })
  }
}

/** Orders addresses as Safe does: by their numeric value. */
export const compareAddresses = (a: Address, b: Address): number => {
  const x = BigInt(a)
  const y = BigInt(b)
  return x < y ? -1 : x > y ? 1 : 0
}

/** One call of a batch: what the Safe calls, with how much ETH. */
export interface SafeCall {
  readonly to: Address
  readonly value: bigint
  readonly data: Hex
}

/**
 * The user operation `callData` that runs `calls` from the Safe, atomically: one call directly, several through
 * MultiSendCallOnly (a delegatecall that refuses nested delegatecalls). Either way through the module's
 * `executeUserOpWithErrorString`, so a failing call reverts the whole batch: with the call's own revert data when it
 * is alone, with none through MultiSendCallOnly 1.4.1 (`simulateBatch` finds the call and its reason).
 */
export const safeBatchCallData = (account: SafeAccount, calls: ReadonlyArray<SafeCall>): Hex => {
  const [only, ...rest] = calls
  if (only === undefined) throw new Error("a batch needs at least one call")
  if (rest.length === 0) {
    return encodeFunctionData({
      abi: safe4337ModuleAbi,
      functionName: "executeUserOpWithErrorString",
      args: [only.to, only.value, only.data, 0]
    })
  }
  // MultiSend's packed encoding: operation (uint8, 0 = call) ‖ to ‖ value ‖ data length ‖ data, per call.
  const transactions = concat(
    calls.map((call) =>
      encodePacked(
        ["uint8", "address", "uint256", "uint256", "bytes"],
        [0, call.to, call.value, BigInt(size(call.data)), call.data]
      )
    )
  )
  return encodeFunctionData({
    abi: safe4337ModuleAbi,
    functionName: "executeUserOpWithErrorString",
    args: [
      account.contracts.multiSendCallOnly,
      0n,
      encodeFunctionData({ abi: multiSendAbi, functionName: "multiSend", args: [transactions] }),
      1
    ]
  })
}

/** The Safe of `identity`: owned by its KeyVault key alone, with the identity's salt. */
export const identitySafe = (owner: Address, identity: AccountIdentity): SafeAccount =>
  safeAccount({ owners: [owner], threshold: 1, saltNonce: BigInt(accountSalt(identity)) })
