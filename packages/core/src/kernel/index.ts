// `@walletgate/core/kernel`: wallet transactions of signed-in users (`POST /v1/kernel/tx`) and the ERC-4337 pipeline module they share with payouts.
export { DelegatecallUnsupported, type KernelError, kernelProblems, TxNotFound } from "./errors"
export { Kernel, type KernelOptions, kernelTxView, MAX_WAIT_SECONDS, type TxLookup } from "./Kernel"
export {
  type KernelTxOptions,
  type KernelTxPorts,
  kernelTx,
  type PipelineOptions,
  type PipelinePorts,
  pipeline
} from "./module"
export { MAX_RESOLVED_USER_IDS, ResolveRequest, ResolveResponse, type ResolverOptions } from "./resolver"
export { KernelTxRequest, KernelTxResponse, TxStatusRequest } from "./schemas"
export { SignRequest, SignResponse } from "./sign"
