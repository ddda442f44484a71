// `@walletgate/core/kernel`: wallet transactions of signed-in users (`POST /v1/kernel/tx`) and the ERC-4337 pipeline module they share with payouts.
export type { DelegatecallUnsupported, KernelError, TxNotFound } from "./errors"
export type { Kernel, KernelOptions, TxLookup } from "./Kernel"
export {
  type KernelTxOptions,
  type KernelTxPorts,
  kernelTx,
  type PipelineOptions,
  type PipelinePorts,
  pipeline
} from "./module"
export type { ResolveRequest, ResolveResponse, ResolverOptions } from "./resolver"
export type { KernelTxRequest, KernelTxResponse, TxStatusRequest } from "./schemas"
export type { SignRequest, SignResponse } from "./sign"
