// `@walletgate/core/devnet`: a local chain for development and tests: anvil, the alto bundler, the contracts
// deployed on it and the test token. Contract bytecode is only reachable from here.

export { sweeperArtifact, testTokenArtifact } from "../chain/artifacts"
export type { ChainContracts } from "../chain/networks"
export { checkErc4337Code } from "../deploy/codeChecks"
export {
  deployContracts,
  deployTestToken,
  type SweeperParameters,
  type TestTokenParameters
} from "../deploy/contracts"
export { deployErc4337Contracts, type Erc4337Contracts, type Erc4337Deployment } from "../deploy/deployment"
export { type AltoInstance, type AltoOptions, startAlto } from "./alto"
export { type AnvilInstance, type AnvilOptions, anvilMnemonic, freePort, startAnvil } from "./anvil"
export { type Devnet, type DevnetOptions, startDevnet } from "./devnet"
export { anvilDevKey, deployLocalContracts, devnetAccountIndexes, type LocalNetwork, startLocalNetwork } from "./local"
