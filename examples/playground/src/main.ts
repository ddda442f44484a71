// The walletgate playground: every endpoint on the embedded defaults, behind Express, on PORT (3000), with
// a local devnet: anvil with the ERC-4337 contracts (EntryPoint, Safe), the operator's paymaster and walletgate's
// dust sweeper, and the alto bundler beside it. Configuration comes from the environment
// (see the README); an invalid variable stops it at start.
import { randomBytes } from "node:crypto"
import { createServer } from "node:net"
import { hostname } from "node:os"
import { embeddedPorts, IdentityProviders, makeGateway, SpendPolicy } from "@walletgate/core"
import {
  clientStatusesFromEnv,
  hostFromEnv,
  identityProvidersFromEnv,
  masterSecretFromEnv,
  operatorTokenFromEnv,
  operatorTokensFromEnv,
  portFromEnv,
  redisKeyPrefixFromEnv,
  redisUrlFromEnv,
  resolverAccessFromEnv,
  smsSenderFromEnv
} from "@walletgate/core/config"
import { deployTestToken, startDevnet, sweeperArtifact, testTokenArtifact } from "@walletgate/core/devnet"
import { Operator, type OperatorCall } from "@walletgate/core/operator"
import { otlpTelemetryFromEnv } from "@walletgate/core/telemetry"
import { walletgate } from "@walletgate/express"
import { RedisStores } from "@walletgate/redis"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import express from "express"
import { createWalletClient, getAddress, type Hash, http, maxUint256, parseEther, parseUnits, zeroAddress } from "viem"
import { anvilAccount, demoAccountIndexes } from "./demo.ts"

// A development secret, public by being in this file: wallets made with it are only for the local chain.
const DEV_MASTER_SECRET = "walletgate-playground-development-master-secret"

const fail = (error: unknown): never => {
  console.error(
    `walletgate playground: invalid configuration: ${error instanceof Error ? error.message : String(error)}`
  )
  process.exit(1)
}

// The playground serves its own local chain: a networks setting would be silently ignored, so it is refused.
const networksRefused = (name: string) =>
  Effect.gen(function* () {
    const set = yield* Config.option(Config.String(name)).pipe(Effect.orElseSucceed(() => Option.none<string>()))
    if (Option.isSome(set)) {
      return yield* Effect.fail(
        new Error(
          `${name} is set, but the playground serves its own local chain (anvil) and no other network: unset it, or run a gateway of your own with it (examples/lambda, docs/configuration.md#networks)`
        )
      )
    }
  })

const settings = await Effect.runPromise(
  Effect.gen(function* () {
    yield* networksRefused("WALLETGATE_NETWORKS")
    yield* networksRefused("WALLETGATE_NETWORKS_FILE")
    return {
      port: yield* portFromEnv,
      host: yield* hostFromEnv,
      masterSecret: yield* masterSecretFromEnv(DEV_MASTER_SECRET),
      identityProviders: yield* identityProvidersFromEnv,
      redisUrl: yield* redisUrlFromEnv,
      redisKeyPrefix: yield* redisKeyPrefixFromEnv,
      operatorToken: yield* operatorTokenFromEnv,
      operatorTokens: yield* operatorTokensFromEnv,
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

// The demo automation account's payout plan: 60/40 to accounts 12 and 13 of anvil's mnemonic, which nothing else uses
// (their balances show exactly what a payout paid), 0.1 ETH kept.
const [payee1, payee2] = [
  anvilAccount(demoAccountIndexes.payees[0]).address,
  anvilAccount(demoAccountIndexes.payees[1]).address
]
const demoPlan = {
  asset: zeroAddress,
  recipients: [
    { address: payee1, shareBps: 6000 },
    { address: payee2, shareBps: 4000 }
  ],
  minimumPayout: parseEther("0.01").toString(),
  reserve: parseEther("0.1").toString()
}
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

// The gateway's ports, built once here: the demo app, key and account are registered through the operator module
// (as `walletgate apps create`, `keys create` and `accounts register` do) in the very stores the gateway reads. With
// REDIS_URL every state port lives in Redis (a later layer wins), so every gateway on that Redis honours them, and a
// rotation or revocation made there, at once.
const portsScope = await Effect.runPromise(Scope.make())
const stopPorts = () => Effect.runPromise(Scope.close(portsScope, Exit.void))
const ports = await Effect.runPromise(
  Layer.buildWithScope(
    Layer.mergeAll(
      embeddedPorts({
        networks: [chain.network],
        masterSecret: settings.masterSecret,
        identityProviders: settings.identityProviders,
        sweeper: {
          network: chain.network.slug,
          tokens: dustTokens,
          prices: { eth: 3000, tokens: { [dust.address]: 0.06, [usdx.address]: 1 } }
        }
      }),
      smsSenderFromEnv,
      ...Option.match(settings.redisUrl, {
        onNone: () => [],
        onSome: (url) => [
          RedisStores.layer({
            url: url.href,
            ...Option.match(settings.redisKeyPrefix, { onNone: () => ({}), onSome: (keyPrefix) => ({ keyPrefix }) })
          })
        ]
      })
    ),
    portsScope
  )
)

/** The playground acts as an operator at the CLI would, under its own name: the audit log shows it. */
const PLAYGROUND: OperatorCall = { actor: { kind: "cli", user: "playground", host: hostname().slice(0, 64) } }
/** The demo app's name, by which a later start finds it in the store. */
const DEMO_APP = "playground demo"

// Idempotent across restarts on one Redis: the demo app an earlier start registered is found by its name and given a
// new secret (only the secret's hash is stored, so the old one cannot be printed again: rotating keeps one demo app
// and one client id however often the playground restarts, where creating one per start would pile them up); the
// demo account is registered once; the earlier starts' test keys of the demo account are revoked and a new one made
// (a key too is shown once). A secret or key printed by an earlier start is thereby refused from now on.
const demo = await Effect.runPromise(
  Effect.gen(function* () {
    const operator = yield* Operator
    const earlier = (yield* operator.listApps).find((app) => app.name === DEMO_APP)
    let app: { readonly clientId: string; readonly clientSecret: string }
    if (earlier === undefined) {
      app = yield* operator.createApp(PLAYGROUND, { name: DEMO_APP, providers: providerNames, testMode: true })
    } else {
      for (const provider of providerNames) {
        if (!earlier.providers.includes(provider)) yield* operator.grantProvider(PLAYGROUND, earlier.clientId, provider)
      }
      app = yield* operator.rotateSecret(PLAYGROUND, earlier.clientId)
    }
    const registered = (yield* operator.listAccounts).find(
      (account) => account.network === chain.network.slug && account.accountKey === "demo"
    )
    const account =
      registered ??
      (yield* operator.registerAccount(PLAYGROUND, { network: chain.network.slug, accountKey: "demo", plan: demoPlan }))
    for (const key of yield* operator.listKeys) {
      const demoKey =
        key.mode === "test" && key.accounts.length === 1 && key.accounts[0] === account.address.toLowerCase()
      if (demoKey && key.revokedAt === undefined) yield* operator.revokeKey(PLAYGROUND, key.id)
    }
    const key = yield* operator.createKey(PLAYGROUND, {
      networks: [chain.network.slug],
      accounts: [account.address],
      mode: "test"
    })
    return { app, account, key: key.key }
  }).pipe(
    Effect.provide(Operator.layer.pipe(Layer.provide(SpendPolicy.layer), Layer.provide(Layer.succeedContext(ports))))
  )
).catch(async (error: unknown) => {
  await Promise.all([stopPorts(), chain.stop()])
  console.error(
    `walletgate playground: cannot register the demo app, key and account${Option.isSome(settings.redisUrl) ? " in Redis (REDIS_URL)" : ""}: ${error instanceof Error ? error.message : String(error)}`
  )
  return process.exit(1)
})
// The demo automation account's Safe: its address is known before it is deployed (its first payout deploys it,
// sponsored by the paymaster); 1 ETH to pay out.
const automationAddress = getAddress(demo.account.address)
await chain.setBalance(automationAddress, parseEther("1"))

// The operator token unlocks the spend detail of GET /v1/health; made anew at each start unless configured.
const operatorToken = Option.match(settings.operatorToken, {
  onNone: () => randomBytes(24).toString("base64url"),
  onSome: Redacted.value
})
const gateway = makeGateway({
  operatorToken,
  operatorTokens: Redacted.value(settings.operatorTokens),
  // Spans, metrics and logs over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT (or a per-signal one) is set; off otherwise.
  telemetry: otlpTelemetryFromEnv,
  kernel: { clientStatuses: settings.clientStatuses, resolver: { access: settings.resolverAccess } },
  ports: Layer.succeedContext(ports)
})
await gateway.ready().catch(async (error: unknown) => {
  await Promise.all([stopPorts(), chain.stop()])
  fail(error)
})

const app = express()
app.use(walletgate(gateway))
const server = app.listen(settings.port, settings.host, (error) => {
  if (error !== undefined) {
    // Express 5 hands the listen error to this callback: a taken port must not print the banner.
    console.error(cannotListen(error.message))
    Promise.all([gateway.dispose().then(stopPorts), chain.stop()]).finally(() => process.exit(1))
    return
  }
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : settings.port
  const base = `http://${settings.host}:${port}`
  console.log(`walletgate playground listening on ${base}
local chain (anvil, chain id ${chain.network.chainId}, network "${chain.network.slug}") at ${chain.anvil.rpcUrl}
bundler (alto, ERC-4337 EntryPoint v0.7 ${chain.deployment.contracts.entryPoint}) at ${chain.bundlerUrl}; paymaster ${chain.deployment.contracts.verifyingPaymaster} sponsors the wallets' gas
state: ${Option.isSome(settings.redisUrl) ? "Redis (REDIS_URL), the demo app, key and account registered there" : "in memory (set REDIS_URL to keep it in Redis)"}
demo app: client_id ${demo.app.clientId} client_secret ${demo.app.clientSecret} (test mode, providers ${providerNames.join(", ")})
demo automation account ${automationAddress} (1 ETH; plan: 60/40 to ${payee1} and ${payee2}, reserve 0.1 ETH), test API key ${demo.key}
operator token ${Option.isSome(settings.operatorToken) ? "from WALLETGATE_OPERATOR_TOKEN" : operatorToken} (Authorization: Bearer … opens the operator API, /v1/operator/*, and the gas budgets' use on /v1/health)
operator console ${base}/operator${Option.isSome(settings.operatorToken) ? " (sign in with that token)" : `#token=${operatorToken}`} (the fragment stays in the browser and leaves the address bar)
demo dust holder ${dustHolder.account.address} (DUST approved, 4 of it swept; USDX sweepable; NOPR without a price)

Try it (the code appears below as "[walletgate sms outbox]"; the README walks through every step):
  curl -s ${base}/functions/v1/signInWithOTP -H 'content-type: application/json' -d '{"phone":"+14155552671"}'
  curl -s ${base}/functions/v1/verifyOTP -H 'content-type: application/json' -d '{"phone":"+14155552671","token":"<code>"}'
  curl -s ${base}/v1/auth -H 'content-type: application/json' -d '{"client_id":"${demo.app.clientId}","client_secret":"${demo.app.clientSecret}"}'
  curl -s ${base}/v1/${chain.network.slug}/account/${automationAddress}/payout/disperse -H 'content-type: application/json' -H 'x-api-key: ${demo.key}' -d '{}'
  curl -s ${base}/api/${dustHolder.account.address}
  curl -s ${base}/api/orders
`)
})

const stop = () => {
  server.close(() => {
    Promise.all([gateway.dispose().then(stopPorts), chain.stop()]).then(() => process.exit(0))
  })
}
process.on("SIGINT", stop)
process.on("SIGTERM", stop)
