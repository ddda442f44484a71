// The walletgate playground: every endpoint on the embedded defaults, behind Express, on PORT (3000), with
// a local devnet: anvil with the ERC-4337 contracts (EntryPoint, Safe), the operator's paymaster and walletgate's
// dust sweeper, and the alto bundler beside it. Configuration comes from the environment
// (see the README); an invalid variable stops it at start.
import { randomBytes } from "node:crypto"
import { createServer } from "node:net"
import {
  ApiKeyStore,
  AutomationAccounts,
  ClientStore,
  embeddedPorts,
  IdentityProviders,
  makeGateway,
  SecureRandom
} from "@walletgate/core"
import { hashClientSecret } from "@walletgate/core/auth"
import { automationIdentity, deriveOwnerKey } from "@walletgate/core/chain"
import {
  clientStatusesFromEnv,
  hostFromEnv,
  identityProvidersFromEnv,
  masterSecretFromEnv,
  operatorTokenFromEnv,
  portFromEnv,
  redisUrlFromEnv,
  resolverAccessFromEnv,
  smsSenderFromEnv
} from "@walletgate/core/config"
import { deployTestToken, startDevnet, sweeperArtifact, testTokenArtifact } from "@walletgate/core/devnet"
import { automationSafe, makeApiKey } from "@walletgate/core/payout"
import { otlpTelemetryFromEnv } from "@walletgate/core/telemetry"
import { walletgate } from "@walletgate/express"
import { RedisStores } from "@walletgate/redis"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import express from "express"
import { createWalletClient, type Hash, http, maxUint256, parseEther, parseUnits, zeroAddress } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { anvilAccount, demoAccountIndexes } from "./demo.ts"

// A development secret, public by being in this file: wallets made with it are only for the local chain.
const DEV_MASTER_SECRET = "walletgate-playground-development-master-secret"

const fail = (error: unknown): never => {
  console.error(
    `walletgate playground: invalid configuration: ${error instanceof Error ? error.message : String(error)}`
  )
  process.exit(1)
}

const settings = await Effect.runPromise(
  Effect.gen(function* () {
    return {
      port: yield* portFromEnv,
      host: yield* hostFromEnv,
      masterSecret: yield* masterSecretFromEnv(DEV_MASTER_SECRET),
      identityProviders: yield* identityProvidersFromEnv,
      redisUrl: yield* redisUrlFromEnv,
      operatorToken: yield* operatorTokenFromEnv,
      clientStatuses: yield* clientStatusesFromEnv,
      resolverAccess: yield* resolverAccessFromEnv
    }
  })
).catch(fail)

// The deployment's identity providers: `phone`, and any external issuer in WALLETGATE_IDENTITY_PROVIDERS. The
// demo app is granted every one of them.
const providerNames = (() => {
  try {
    return IdentityProviders.make(settings.identityProviders).all.map((provider) => provider.name)
  } catch (error) {
    return fail(error)
  }
})()

// The SMS settings and the port are checked before the devnet starts (≈ 10 s): either wrong stops the playground at
// once. The port is listened on again below (another program may take it meanwhile: that error is handled there too).
await Effect.runPromise(Effect.scoped(Layer.build(smsSenderFromEnv))).catch(fail)
const cannotListen = (reason: string) =>
  `walletgate playground: cannot listen on port ${settings.port} (${reason}); set PORT= to choose another, e.g. PORT=3001 npm start`
if (settings.port !== 0) {
  const probe = createServer()
  const free = await new Promise<Error | undefined>((resolve) => {
    probe.once("error", resolve)
    probe.listen(settings.port, settings.host, () => probe.close(() => resolve(undefined)))
  })
  if (free !== undefined) {
    console.error(cannotListen(free.message))
    process.exit(1)
  }
}

console.log("starting the local chain (anvil, the bundler) and deploying the contracts…")
const chain = await startDevnet()

// A demo automation account with a payout plan (60/40 to accounts 12 and 13 of anvil's mnemonic, which nothing else
// uses: their balances show exactly what a payout paid), funded with 1 ETH, and a test API key for it.
const automationDemo = automationIdentity("demo")
const automationOwner = privateKeyToAccount(deriveOwnerKey(settings.masterSecret, automationDemo)).address
// Its Safe's address is known before it is deployed: its first payout deploys it, sponsored by the paymaster.
const automationAddress = automationSafe(automationOwner, { accountKey: "demo" }).address
const [payee1, payee2] = [
  anvilAccount(demoAccountIndexes.payees[0]).address,
  anvilAccount(demoAccountIndexes.payees[1]).address
]
await chain.setBalance(automationAddress, parseEther("1"))
const demoKey = Effect.runSync(
  makeApiKey({ mode: "test", networks: [chain.network.slug], accounts: [automationAddress] }).pipe(
    Effect.provide(SecureRandom.crypto)
  )
)
// Dust sweeping: three test tokens held by a demo holder (account 10 of anvil's mnemonic). It approved the sweeper
// for all its DUST, and a taker (account 11) swept 4 DUST at the operator's (dev account 1) rate of 0.00002 ETH per
// DUST; USDX is priced but not approved; NOPR has no price (./demo.ts names every account the demo uses).
const walletOf = (index: number) =>
  createWalletClient({
    chain: chain.publicClient.chain,
    transport: http(chain.anvil.rpcUrl),
    account: anvilAccount(index)
  })
const [deployer, operator, dustHolder, taker] = [
  walletOf(demoAccountIndexes.tokenDeployer),
  walletOf(demoAccountIndexes.sweeperOperator),
  walletOf(demoAccountIndexes.dustHolder),
  walletOf(demoAccountIndexes.taker)
]
for (const funded of [dustHolder, taker]) await chain.setBalance(funded.account.address, parseEther("10"))
const mined = (hash: Hash) => chain.publicClient.waitForTransactionReceipt({ hash })
const dustToken = async (symbol: string, decimals: number, held: string) => {
  const address = await deployTestToken(deployer, chain.publicClient, { name: `${symbol} (test)`, symbol, decimals })
  const args = [dustHolder.account.address, parseUnits(held, decimals)] as const
  await mined(await deployer.writeContract({ address, abi: testTokenArtifact.abi, functionName: "mint", args }))
  return { address, symbol, decimals }
}
const dust = await dustToken("DUST", 18, "12.5")
const usdx = await dustToken("USDX", 6, "3.25")
const dustTokens = [dust, usdx, await dustToken("NOPR", 18, "7")]
const sweeperAddress = chain.contracts.sweeper
await mined(
  await dustHolder.writeContract({
    address: dust.address,
    abi: testTokenArtifact.abi,
    functionName: "approve",
    args: [sweeperAddress, maxUint256]
  })
)
await mined(
  await operator.writeContract({
    address: sweeperAddress,
    abi: sweeperArtifact.abi,
    functionName: "setRate",
    args: [dust.address, parseEther("0.00002")]
  })
)
await mined(
  await taker.writeContract({
    address: sweeperAddress,
    abi: sweeperArtifact.abi,
    functionName: "sweep",
    args: [dust.address, dustHolder.account.address, parseEther("4")],
    value: parseEther("0.00008")
  })
)

const demoApp = {
  clientId: `wgc_${randomBytes(8).toString("hex")}`,
  clientSecret: `wgs_${randomBytes(24).toString("base64url")}`
}
const demoAppRecord = {
  clientId: demoApp.clientId,
  secretHash: hashClientSecret(demoApp.clientSecret),
  providers: providerNames,
  testMode: true
}
const demoAccount = {
  address: automationAddress,
  network: chain.network.slug,
  accountKey: "demo",
  plan: {
    asset: zeroAddress,
    recipients: [
      { address: payee1, shareBps: 6000 },
      { address: payee2, shareBps: 4000 }
    ],
    minimumPayout: parseEther("0.01").toString(),
    reserve: parseEther("0.1").toString()
  }
}
// The operator token unlocks the spend detail of GET /v1/health; made anew at each start unless configured.
const operatorToken = Option.match(settings.operatorToken, {
  onNone: () => randomBytes(24).toString("base64url"),
  onSome: Redacted.value
})
const gateway = makeGateway({
  operatorToken,
  // Spans, metrics and logs over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT (or a per-signal one) is set; off otherwise.
  telemetry: otlpTelemetryFromEnv,
  kernel: { clientStatuses: settings.clientStatuses, resolver: { access: settings.resolverAccess } },
  ports: Layer.mergeAll(
    embeddedPorts({
      networks: [chain.network],
      masterSecret: settings.masterSecret,
      identityProviders: settings.identityProviders,
      apps: [demoAppRecord],
      apiKeys: [demoKey.record],
      automationAccounts: [demoAccount],
      sweeper: {
        network: chain.network.slug,
        tokens: dustTokens,
        prices: { eth: 3000, tokens: { [dust.address]: 0.06, [usdx.address]: 1 } }
      }
    }),
    smsSenderFromEnv,
    // With REDIS_URL every state port lives in Redis (a later layer wins), except the demo app, key and
    // account: they are made anew at each start, so they stay in this process's memory.
    ...Option.match(settings.redisUrl, {
      onNone: () => [],
      onSome: (url) => [
        RedisStores.layer({ url: url.href }),
        ClientStore.memory([demoAppRecord]),
        ApiKeyStore.memory([demoKey.record]),
        AutomationAccounts.memory([demoAccount])
      ]
    })
  )
})
await gateway.ready().catch(async (error: unknown) => {
  await chain.stop()
  fail(error)
})

const app = express()
app.use(walletgate(gateway))
const server = app.listen(settings.port, settings.host, (error) => {
  if (error !== undefined) {
    // Express 5 hands the listen error to this callback: a taken port must not print the banner.
    console.error(cannotListen(error.message))
    Promise.all([gateway.dispose(), chain.stop()]).finally(() => process.exit(1))
    return
  }
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : settings.port
  const base = `http://${settings.host}:${port}`
  console.log(`walletgate playground listening on ${base}
local chain (anvil, chain id ${chain.network.chainId}, network "${chain.network.slug}") at ${chain.anvil.rpcUrl}
bundler (alto, ERC-4337 EntryPoint v0.7 ${chain.deployment.contracts.entryPoint}) at ${chain.bundlerUrl}; paymaster ${chain.deployment.contracts.verifyingPaymaster} sponsors the wallets' gas
state: ${Option.isSome(settings.redisUrl) ? "Redis (REDIS_URL)" : "in memory (set REDIS_URL to keep it in Redis)"}
demo app: client_id ${demoApp.clientId} client_secret ${demoApp.clientSecret} (test mode, providers ${providerNames.join(", ")})
demo automation account ${automationAddress} (1 ETH; plan: 60/40 to ${payee1} and ${payee2}, reserve 0.1 ETH), test API key ${demoKey.key}
operator token ${Option.isSome(settings.operatorToken) ? "from WALLETGATE_OPERATOR_TOKEN" : operatorToken} (Authorization: Bearer … on /v1/health shows the gas budgets' use)
demo dust holder ${dustHolder.account.address} (DUST approved, 4 of it swept; USDX sweepable; NOPR without a price)

Try it (the code appears below as "[walletgate sms outbox]"; the README walks through every step):
  curl -s ${base}/functions/v1/signInWithOTP -H 'content-type: application/json' -d '{"phone":"+14155552671"}'
  curl -s ${base}/functions/v1/verifyOTP -H 'content-type: application/json' -d '{"phone":"+14155552671","token":"<code>"}'
  curl -s ${base}/v1/auth -H 'content-type: application/json' -d '{"client_id":"${demoApp.clientId}","client_secret":"${demoApp.clientSecret}"}'
  curl -s ${base}/v1/${chain.network.slug}/account/${automationAddress}/payout/disperse -H 'content-type: application/json' -H 'x-api-key: ${demoKey.key}' -d '{}'
  curl -s ${base}/api/${dustHolder.account.address}
  curl -s ${base}/api/orders
`)
})

const stop = () => {
  server.close(() => {
    Promise.all([gateway.dispose(), chain.stop()]).then(() => process.exit(0))
  })
}
process.on("SIGINT", stop)
process.on("SIGTERM", stop)
