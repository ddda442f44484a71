// Which of anvil's mnemonic accounts play which part in the playground's demo. The devnet's own contracts and
// services use some (`devnetAccountIndexes`: the sweeper's, the paymaster's, alto's executors…), whose balances move
// by gas, fees and refunds; the payout plan pays accounts nothing else uses, so a newcomer checking a payout by
// balances sees exactly what was paid.
import { anvilMnemonic, devnetAccountIndexes } from "@walletgate/core/devnet"
import type { HDAccount } from "viem"
import { mnemonicToAccount } from "viem/accounts"

/** Indexes of anvil's mnemonic the demo uses, beside the devnet's own. */
export const demoAccountIndexes = {
  /** Deploys and mints the dust test tokens: the sweeper's deployer. */
  tokenDeployer: devnetAccountIndexes.sweeperDeployer,
  /** Sets the sweeper's rate for DUST. */
  sweeperOperator: devnetAccountIndexes.sweeperOperator,
  /** Holds the dust, approved the sweeper for DUST. */
  dustHolder: 10,
  /** Swept some of the holder's DUST. */
  taker: 11,
  /** The demo payout plan's recipients (60 % and 40 %): unfunded, and used by nothing else. */
  payees: [12, 13]
} as const

/** Account `index` of anvil's mnemonic (test keys: the local chain only). */
export const anvilAccount = (index: number): HDAccount => mnemonicToAccount(anvilMnemonic, { addressIndex: index })
