import {
  type App,
  type Bundler,
  ClientStore,
  type ExternalIssuerConfig,
  embeddedPorts,
  type Gateway,
  type IdempotencyStore,
  makeGateway,
  type TransactionLog
} from "@walletgate/core"
import { hashClientSecret } from "@walletgate/core/auth"
import type { NetworkConfig, SpendLimitsOptions } from "@walletgate/core/chain"
import type { KernelTxOptions, PipelineOptions } from "@walletgate/core/kernel"
import { type AccountIdentity, automationIdentity, identitySafe, userWalletIdentity } from "@walletgate/core/operations"
import { type ApiKeyRecord, type AutomationAccount, automationSafe, type PayoutPlan } from "@walletgate/core/payout"
import type { Telemetry } from "@walletgate/core/telemetry"
import { RedisStores } from "@walletgate/redis"
import type { Logger } from "effect"
import { Layer } from "effect"
import type { Address } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { registerApps } from "../../../store-redis/test/apps"
import type { PaymasterServiceConfig } from "../../src/chain/networks"
import { startDevnet } from "../../src/devnet/devnet"
import { deriveOwnerKey } from "../../src/operations/KeyVault"
import { startRpcProxy } from "../devnet/rpcProxy"
import {
  deployDevnetToken,
  freshMasterSecret,
  paymasterDeposit,
  type SharedDevnet,
  sendEther,
  sharedDevnet
} from "../devnet/shared"
import { jsonCaller } from "../gatewayCall"

export const CLIENT = { clientId: "wgc_test", clientSecret: "wgs_test_secret" }
export const TEST_PHONE = "+15005550006"
export const OTHER_PHONE = "+15005550007"
export const TEST_CODE = "123456"

/**
 * The `erc4337` of `network` with the confirmations, the paymaster's low mark and the bundler asked for, if any; with
 * `paymasterService`, sponsored by that ERC-7677 service instead of the paymaster's signer.
 */
const pipelineOf = (
  network: NetworkConfig,
  confirmations: number | undefined,
  minDepositWei: bigint | undefined,
  bundlerUrl: string | undefined,
  paymasterService: PaymasterServiceConfig | undefined
): Pick<NetworkConfig, "erc4337"> => {
  const { erc4337 } = network
  if (erc4337?.paymaster === undefined) throw new Error(`network ${network.slug} has no paymaster`)
  if (paymasterService !== undefined) {
    const { paymaster: _signer, ...common } = erc4337
    return {
      erc4337: {
        ...common,
        ...(bundlerUrl === undefined ? {} : { bundlerUrl }),
        ...(confirmations === undefined ? {} : { confirmations }),
        paymasterService
      }
    }
  }
  return {
    erc4337: {
      ...erc4337,
      ...(bundlerUrl === undefined ? {} : { bundlerUrl }),
      ...(confirmations === undefined ? {} : { confirmations }),
      paymaster: { ...erc4337.paymaster, ...(minDepositWei === undefined ? {} : { minDepositWei }) }
    }
  }
}

/**
 * A gateway on the worker's devnet (anvil, alto, the ERC-4337 contracts and the operator's paymaster) with one app
 * (test mode, granted `phone`), its own master secret (so its wallets are new on the chain) and test token, plus
 * helpers to call it and read the chain.
 */
export const startKernelFixture = async (
  extra: {
    /** The deployment's external identity providers. */
    readonly identityProviders?: ReadonlyArray<ExternalIssuerConfig>
    /** Providers granted to the fixture's app besides `phone`. */
    readonly grants?: ReadonlyArray<string>
    readonly apps?: ReadonlyArray<App>
    /** Apps put straight into the store, past the registration checks (as a stale or hand-edited record would be). */
    readonly storedApps?: ReadonlyArray<App>
    /** The paymaster's low mark on both networks (`GET /v1/health`). */
    readonly paymasterMinDepositWei?: bigint
    /** The spend policy's limits on both networks (default: each network's defaults). */
    readonly spend?: SpendLimitsOptions
    /** The operator token that unlocks the detail of `GET /v1/health`. */
    readonly operatorToken?: string
    /** API keys to register, given the automation accounts. */
    readonly apiKeys?: (accounts: ReadonlyArray<AutomationAccount>) => ReadonlyArray<ApiKeyRecord>
    /** Automation accounts to register, given the test token's address. */
    readonly automation?: (
      token: Address
    ) => ReadonlyArray<{ readonly accountKey: string; readonly network?: string; readonly plan?: PayoutPlan }>
    readonly loggers?: ReadonlyArray<Logger.Logger<unknown, unknown>>
    /** Ports that replace the embedded ones (a fault-injecting bundler or store), given the devnet. */
    readonly ports?: (
      devnet: SharedDevnet
    ) =>
      | Layer.Layer<Bundler>
      | Layer.Layer<Bundler | IdempotencyStore>
      | Layer.Layer<TransactionLog>
      | Layer.Layer<Bundler | TransactionLog>
    /** The wallet routes' options (refusal statuses, the resolver's access). */
    readonly kernel?: KernelTxOptions
    /** The shared pipeline's options (the deploy lock's bound). */
    readonly pipeline?: PipelineOptions
    /** Blocks (the including one too) before an operation is final; default the network's (1). */
    readonly confirmations?: number
    /** Puts an RPC proxy (`nodeProxy`) between the gateway and the node, to play a node that fails. */
    readonly nodeProxy?: boolean
    /** Puts an RPC proxy (`bundlerProxy`) between the gateway and alto, to play a bundler that refuses or fails. */
    readonly bundlerProxy?: boolean
    /** Another bundler on the worker's devnet instead of its alto (one whose bundles the test makes). */
    readonly bundlerUrl?: string
    /**
     * A devnet of the fixture's own, stopped with it, instead of the worker's: for a file that rewinds the chain
     * (`anvil_reorg`), which the other files of the worker must never see.
     */
    readonly ownDevnet?: boolean
    /** An ERC-7677 paymaster service that sponsors both networks instead of the devnet paymaster's signer. */
    readonly paymasterService?: PaymasterServiceConfig
    /** Where the gateway exports its telemetry (`otlpTelemetry`). */
    readonly telemetry?: Layer.Layer<Telemetry>
    /** The Redis profile: every state port on this Redis, the apps registered there. */
    readonly redis?: { readonly url: string; readonly keyPrefix: string }
  } = {}
) => {
  const own = extra.ownDevnet === true ? await startDevnet() : undefined
  const local: SharedDevnet =
    own === undefined
      ? await sharedDevnet()
      : {
          ...own,
          anvilRequest: (method, params) =>
            own.publicClient.request({ method: method as never, params: params as never })
        }
  const { publicClient } = local
  const masterSecret = freshMasterSecret()
  const nodeProxy = extra.nodeProxy === true ? await startRpcProxy(local.anvil.rpcUrl) : undefined
  const bundlerProxy =
    extra.bundlerProxy === true ? await startRpcProxy(extra.bundlerUrl ?? local.bundlerUrl) : undefined
  const testToken = await deployDevnetToken(local, { name: "Test USD", symbol: "TUSD", decimals: 6 })
  const token = testToken.address
  /** The address of `identity`'s Safe (a user's wallet), before or after deployment. */
  const walletOf = async (identity: AccountIdentity): Promise<Address> =>
    identitySafe(privateKeyToAccount(deriveOwnerKey(masterSecret, identity)).address, identity).address
  /** The address of the automation account `accountKey` (its Safe). */
  const automationWalletOf = async (accountKey: string): Promise<Address> =>
    automationSafe(privateKeyToAccount(deriveOwnerKey(masterSecret, automationIdentity(accountKey))).address, {
      accountKey
    }).address
  const automationAccounts: Array<AutomationAccount> = []
  for (const wanted of extra.automation?.(token) ?? []) {
    const address = await automationWalletOf(wanted.accountKey)
    automationAccounts.push({
      address,
      network: wanted.network ?? "anvil",
      accountKey: wanted.accountKey,
      ...(wanted.plan === undefined ? {} : { plan: wanted.plan })
    })
  }
  const apps: ReadonlyArray<App> = [
    {
      clientId: CLIENT.clientId,
      secretHash: hashClientSecret(CLIENT.clientSecret),
      providers: ["phone", ...(extra.grants ?? [])],
      testMode: true
    },
    ...(extra.apps ?? [])
  ]
  const redis = extra.redis === undefined ? undefined : RedisStores.layer(extra.redis)
  if (extra.redis !== undefined) await registerApps(extra.redis, apps)
  const gateway: Gateway = makeGateway({
    ports: Layer.mergeAll(
      embeddedPorts({
        masterSecret,
        otp: { testPhones: { [TEST_PHONE]: TEST_CODE, [OTHER_PHONE]: TEST_CODE } },
        identityProviders: extra.identityProviders ?? [],
        networks: [local.network, { ...local.network, slug: "live" }].map((network, index) => ({
          ...network,
          ...(nodeProxy === undefined ? {} : { rpcUrl: nodeProxy.url }),
          testnet: index === 0,
          ...(extra.spend === undefined ? {} : { spend: extra.spend }),
          ...pipelineOf(
            network,
            extra.confirmations,
            extra.paymasterMinDepositWei,
            bundlerProxy?.url ?? extra.bundlerUrl,
            extra.paymasterService
          )
        })),
        apps,
        apiKeys: extra.apiKeys?.(automationAccounts) ?? [],
        automationAccounts
      }),
      ...(extra.storedApps === undefined ? [] : [ClientStore.memory([...apps, ...extra.storedApps])]),
      ...(redis === undefined ? [] : [redis]),
      ...(extra.ports === undefined ? [] : [extra.ports(local)])
    ),
    ...(process.env.KERNEL_DEBUG === undefined ? { loggers: extra.loggers ?? [] } : {}),
    ...(extra.operatorToken === undefined ? {} : { operatorToken: extra.operatorToken }),
    ...(extra.kernel === undefined ? {} : { kernel: extra.kernel }),
    ...(extra.pipeline === undefined ? {} : { pipeline: extra.pipeline }),
    ...(extra.telemetry === undefined ? {} : { telemetry: extra.telemetry })
  })

  const call = jsonCaller(gateway)

  const accessToken = async (client = CLIENT) => {
    const granted = await call("POST", "/v1/auth", { client_id: client.clientId, client_secret: client.clientSecret })
    return String(granted.body.access_token)
  }

  /** Signs in the test phone and returns `phone:<user id>`, its JWT and its wallet's identity. */
  const phoneUser = async (phone = TEST_PHONE) => {
    await call("POST", "/functions/v1/signInWithOTP", { phone })
    const verified = await call("POST", "/functions/v1/verifyOTP", { phone, token: TEST_CODE })
    const user = verified.body.user as { id: string }
    return {
      userId: `phone:${user.id}`,
      jwt: String(verified.body.access_token),
      identity: userWalletIdentity("phone", user.id)
    }
  }

  const fund = async (address: Address, wei: bigint, tokens = 0n) => {
    if (wei > 0n) await sendEther(local, address, wei)
    if (tokens > 0n) await testToken.mint(address, tokens)
  }

  /**
   * The kernel transaction `id` once final (its status read as a client would, every 50 ms, 20 s at most): the
   * answer of `GET /v1/kernel/tx/:id`.
   */
  const settled = async (id: unknown, headers: Record<string, string>) => {
    const deadline = Date.now() + 20_000
    while (true) {
      const status = await call("GET", `/v1/kernel/tx/${String(id)}`, undefined, headers)
      if (status.status !== 200 || status.body.status !== "submitted" || Date.now() > deadline) return status.body
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  /** Disposes the gateway and stops the proxy; the worker's devnet stays up, the fixture's own stops. */
  const stop = async () => {
    await gateway.dispose()
    await nodeProxy?.stop()
    await bundlerProxy?.stop()
    await own?.stop()
  }

  return {
    local,
    publicClient,
    token,
    gateway,
    call,
    accessToken,
    phoneUser,
    walletOf,
    automationWalletOf,
    settled,
    paymasterDeposit: () => paymasterDeposit(local),
    fund,
    tokenBalance: testToken.balanceOf,
    masterSecret,
    automationAccounts,
    nodeProxy,
    bundlerProxy,
    stop
  }
}

export { freshAddress } from "../devnet/shared"
