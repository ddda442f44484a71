import { embeddedPorts, type Gateway, type GatewayPorts, makeGateway, SecureRandom } from "@walletgate/core"
import type { NetworkConfig, SpendLimitsOptions } from "@walletgate/core/chain"
import { automationIdentity } from "@walletgate/core/operations"
import {
  type ApiKeyRecord,
  type AutomationAccount,
  automationSafe,
  makeApiKey,
  type PayoutPlan,
  partNonceKey
} from "@walletgate/core/payout"
import type { Layer, Logger } from "effect"
import * as Effect from "effect/Effect"
import { type Address, type Hash, zeroAddress } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { deriveOwnerKey } from "../../src/operations/KeyVault"
import { PLAN_PAYOUT_NONCE_KEY } from "../../src/payout/planning"
import { planPartNonceKey } from "../../src/payout/split"
import { type ProxiedCall, startRpcProxy } from "../devnet/rpcProxy"
import {
  deployDevnetToken,
  freshMasterSecret,
  type SharedDevnet,
  sendEther,
  sharedDevnet,
  userOperationEvents
} from "../devnet/shared"
import { jsonCaller } from "../gatewayCall"

/** An automation account the fixture registers, before its address is known. */
export interface WantedAccount {
  readonly accountKey: string
  readonly network?: string
  readonly coOwner?: Address
  readonly plan?: (token: Address) => PayoutPlan
}

/** The config of the devnet as a gateway network (`slug`, test or live), its bundler and paymaster included. */
export const devnetNetwork = (
  devnet: SharedDevnet,
  options: {
    readonly slug?: string
    readonly testnet?: boolean
    readonly bundlerUrl?: string
    readonly rpcUrl?: string
  } = {}
): NetworkConfig => {
  const { erc4337 } = devnet.network
  if (erc4337 === undefined) throw new Error("the devnet has no bundler")
  return {
    ...devnet.network,
    slug: options.slug ?? "anvil",
    testnet: options.testnet ?? true,
    ...(options.rpcUrl === undefined ? {} : { rpcUrl: options.rpcUrl }),
    erc4337: { ...erc4337, bundlerUrl: options.bundlerUrl ?? erc4337.bundlerUrl }
  }
}

/** The Safe address of the automation account `accountKey` (with `coOwner`) under `masterSecret`. */
export const automationAddress = (masterSecret: string, accountKey: string, coOwner?: Address): Address =>
  automationSafe(privateKeyToAccount(deriveOwnerKey(masterSecret, automationIdentity(accountKey))).address, {
    accountKey,
    ...(coOwner === undefined ? {} : { coOwner })
  }).address

/**
 * The worker's devnet (anvil, alto, the ERC-4337 contracts and a paymaster) with a master secret and a test token of
 * this file's own, and dev account 0 to fund.
 */
export const startPayoutDevnet = async () => {
  const devnet = await sharedDevnet()
  const masterSecret = freshMasterSecret()
  const testToken = await deployDevnetToken(devnet, { name: "Test USD", symbol: "TUSD", decimals: 6 })
  const fund = async (address: Address, wei: bigint, tokens = 0n) => {
    if (wei > 0n) await sendEther(devnet, address, wei)
    if (tokens > 0n) await testToken.mint(address, tokens)
  }
  const balance = (address: Address) => devnet.publicClient.getBalance({ address })
  /** The EntryPoint's `UserOperationEvent`s of `sender`: each operation it executed, once. */
  const executed = (sender: Address) => userOperationEvents(devnet, { sender })
  return {
    devnet,
    masterSecret,
    token: testToken.address,
    fund,
    tokenBalance: testToken.balanceOf,
    balance,
    executed
  }
}

/** A payout devnet and a gateway over it, with the automation accounts and API keys given. */
export const startPayoutFixture = async (options: {
  readonly accounts: ReadonlyArray<WantedAccount>
  readonly apiKeys: (accounts: ReadonlyArray<AutomationAccount>) => ReadonlyArray<ApiKeyRecord>
  readonly spend?: SpendLimitsOptions
  readonly loggers?: ReadonlyArray<Logger.Logger<unknown, unknown>>
  /** The ports from the embedded ones (e.g. merged with Redis stores, a later layer wins). */
  readonly ports?: (embedded: Layer.Layer<GatewayPorts>) => Layer.Layer<GatewayPorts>
  /** Changes to the network configs (a bundler timeout, say). */
  readonly network?: (config: NetworkConfig) => NetworkConfig
  /** Puts a fault-injecting JSON-RPC proxy between the gateway and the bundler. */
  readonly bundlerProxy?: boolean
  /** The gateway's largest request body (large payouts). */
  readonly bodyLimit?: number
  /** Serves the operator API (`/v1/operator/*`) to this Bearer token (at least 32 characters). */
  readonly operatorToken?: string
}) => {
  const chain = await startPayoutDevnet()
  const proxy = options.bundlerProxy === true ? await startRpcProxy(chain.devnet.bundlerUrl) : undefined
  const automationAccounts: ReadonlyArray<AutomationAccount> = options.accounts.map((wanted) => ({
    address: automationAddress(chain.masterSecret, wanted.accountKey, wanted.coOwner),
    network: wanted.network ?? "anvil",
    accountKey: wanted.accountKey,
    ...(wanted.coOwner === undefined ? {} : { coOwner: wanted.coOwner }),
    ...(wanted.plan === undefined ? {} : { plan: wanted.plan(chain.token) })
  }))
  const bundlerUrl = proxy === undefined ? {} : { bundlerUrl: proxy.url }
  const networks = [
    devnetNetwork(chain.devnet, bundlerUrl),
    devnetNetwork(chain.devnet, { slug: "live", testnet: false, ...bundlerUrl })
  ].map((config) => ({
    ...(options.network?.(config) ?? config),
    ...(options.spend === undefined ? {} : { spend: options.spend })
  }))
  const apiKeys = options.apiKeys(automationAccounts)
  const gateway: Gateway = makeGateway({
    ports: (options.ports ?? ((embedded) => embedded))(
      embeddedPorts({ masterSecret: chain.masterSecret, networks, apiKeys, automationAccounts })
    ),
    ...(process.env.PAYOUT_DEBUG === undefined ? { loggers: options.loggers ?? [] } : {}),
    ...(options.bodyLimit === undefined ? {} : { bodyLimit: options.bodyLimit }),
    ...(options.operatorToken === undefined ? {} : { operatorTokens: [{ id: "ops", token: options.operatorToken }] })
  })
  const call = jsonCaller(gateway)
  /** Reads the payout's status by id until it is final (20 s at most). */
  const final = async (account: Address, id: unknown, key: string) => {
    const deadline = Date.now() + 20_000
    while (Date.now() < deadline) {
      const answer = await call("GET", `/v1/anvil/account/${account}/payout/${String(id)}`, undefined, {
        "x-api-key": key
      })
      if (answer.body.status !== "submitted") return answer
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    throw new Error(`payout ${String(id)} not final`)
  }
  const stop = async () => {
    await gateway.dispose()
    await proxy?.stop()
  }
  return { ...chain, automationAccounts, networks, gateway, call, final, proxy, stop }
}

/** A test-mode API key for `accounts` on the devnet's network: the key (shown once) and its record. */
export const testApiKey = (accounts: ReadonlyArray<string>) =>
  Effect.runSync(makeApiKey({ mode: "test", networks: ["anvil"], accounts }).pipe(Effect.provide(SecureRandom.crypto)))

/**
 * One test-mode API key for every account of a fixture: `apiKeys` is the fixture's option, `key()` the key it made
 * (empty until the fixture has started).
 */
export const oneTestKey = () => {
  let key = ""
  return {
    apiKeys: (accounts: ReadonlyArray<AutomationAccount>): ReadonlyArray<ApiKeyRecord> => {
      const made = testApiKey(accounts.map((account) => account.address))
      key = made.key
      return [made.record]
    },
    key: () => key
  }
}

/** An automation account whose plan pays all it holds, in the native currency, to `recipient`. */
export const payingAllTo = (accountKey: string, recipient: Address): WantedAccount => ({
  accountKey,
  plan: () => ({
    asset: zeroAddress,
    recipients: [{ address: recipient, shareBps: 10_000 }],
    minimumPayout: "1",
    reserve: "0"
  })
})

/** Waits until `sender`'s EntryPoint executed `count` operations at least (20 s at most); resolves with them. */
export const untilExecuted = async (
  chain: Pick<Awaited<ReturnType<typeof startPayoutDevnet>>, "executed">,
  sender: Address,
  count: number
) => {
  const deadline = Date.now() + 20_000
  let executed = await chain.executed(sender)
  while (executed.length < count && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    executed = await chain.executed(sender)
  }
  return executed
}

/** A hash as viem types it. */
export const asHash = (value: unknown): Hash => value as Hash

/** The EntryPoint nonces of the `parts` operations of explicit split payout `payoutId` (each on its key, sequence 0). */
export const payoutPartNonces = (payoutId: string, parts: number): ReadonlyArray<bigint> =>
  Array.from({ length: parts }, (_, index) => partNonceKey(payoutId, index) << 64n)

/**
 * The EntryPoint nonces of the `parts` operations of `account`'s plan payout on turn `turn`: part 0 at the turn on
 * the plan payout key, the others each on its key derived from the account and the turn, sequence 0.
 */
export const planPartNonces = (account: Address, turn: bigint, parts: number): ReadonlyArray<bigint> =>
  Array.from({ length: parts }, (_, index) =>
    index === 0 ? (PLAN_PAYOUT_NONCE_KEY << 64n) | turn : planPartNonceKey(account, turn, index) << 64n
  )

/**
 * For each operation of a split payout, by its EntryPoint nonce (`payoutPartNonces`, `planPartNonces`): how many
 * times `calls` (a bundler proxy's) sent it (`eth_sendUserOperation` with that nonce), and how many different signed
 * operations those were.
 */
export const partSends = (calls: ReadonlyArray<ProxiedCall>, nonces: ReadonlyArray<bigint>) =>
  nonces.map((nonce) => {
    const sent = calls
      .filter((call) => call.method === "eth_sendUserOperation")
      .map((call) => call.params[0] as { readonly nonce?: unknown; readonly signature?: unknown } | undefined)
      .filter((op) => typeof op?.nonce === "string" && BigInt(op.nonce) === nonce)
    return { sends: sent.length, signed: new Set(sent.map((op) => op?.signature)).size }
  })
