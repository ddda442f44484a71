// `walletgate providers check`, `walletgate contracts deploy` and `walletgate doctor`: a deployment's identity
// providers and networks, checked and made ready before the gateways start.
import { readFileSync } from "node:fs"
import * as Effect from "effect/Effect"
import { IdentityProviders } from "../auth/IdentityProviders"
import { findNetwork } from "../chain/networks"
import { deployerKeyFromEnv, networkSettingsFromEnv } from "../config/networksEnv"
import { type NetworkSettings, parseAmount } from "../config/networksFile"
import { fail, type HelpTexts, type Invocation, unknown } from "./common"
import { deployNetworkContracts, deployTable } from "./contracts"
import { doctorTable, runDoctor } from "./doctor"
import { paymasterHelp, servePaymaster } from "./paymaster"

/** The help of `walletgate providers`, `walletgate contracts` and `walletgate doctor`. */
export const deploymentHelp: HelpTexts = {
  paymaster: paymasterHelp,
  "paymaster serve": paymasterHelp,
  providers: `walletgate providers: the external identity providers a deployment registers.

usage:
  walletgate providers check <file>`,
  "providers check": `walletgate providers check: builds the identity providers a file describes, as a gateway would at start,
and lists them; exits 1 naming the first invalid entry.

usage:
  walletgate providers check <file>   (a JSON array of { name, issuer, audience, jwksUrl, algorithms, subjectClaim? },
                                       as WALLETGATE_IDENTITY_PROVIDERS holds it)`,
  contracts: `walletgate contracts: the contracts a network needs, deployed where missing.

usage:
  walletgate contracts deploy --network <name> [--new-paymaster] [--deposit <amount>] [--stake <amount>]`,
  "contracts deploy": `walletgate contracts deploy: deploys whatever is missing on a network of the networks file, from
$WALLETGATE_DEPLOYER_KEY's account: EntryPoint v0.7, the Safe singleton factory (its presigned deployment), Safe
1.4.1 (singleton, L2 singleton, proxy factory, MultiSend, MultiSendCallOnly, fallback handler), Safe4337Module and
SafeModuleSetup at their canonical addresses, then the operator's VerifyingPaymaster and its deposit. A second run
deploys nothing and says so. The node must report the configured chain id.

usage:
  walletgate contracts deploy --network <name> [--new-paymaster] [--deposit <amount>] [--stake <amount>]
options:
  --network <name>       a network of $WALLETGATE_NETWORKS_FILE: its slug, chain id or EIP-3770 name
  --new-paymaster        deploy a paymaster when the file names no address (then set the printed address in the file)
  --deposit <amount>     the paymaster's deposit at the EntryPoint to reach, e.g. "0.5 ether" (default: the file's
                         paymaster.minDeposit, else none)
  --stake <amount>       stake to add when the paymaster has none, e.g. "0.1 ether" (bundlers on public networks
                         want staked paymasters; default none)
  --unstake-delay <s>    the stake's unstake delay in seconds (default 86400)`,
  doctor: `walletgate doctor: checks a network of the networks file as the gateway will use it: the node's chain id,
the code hash at each contract's address, the paymaster (code, EntryPoint, signer, deposit; or a paymaster service:
stub data for a dry operation, and code at the paymaster it names), the bundler
(eth_supportedEntryPoints), the fee caps and the spend budgets; prints a table and exits 1 if a check fails.

usage:
  walletgate doctor --network <name> [--json]
options:
  --network <name>   a network of $WALLETGATE_NETWORKS_FILE: its slug, chain id or EIP-3770 name
  --json             the checks as JSON ({ network, ok, checks: [{ check, status, detail }] })`
}

/** Builds the registry the file describes, as a gateway would at start, and lists it; exits 1 on the first error. */
const checkProviders = (path: string): void => {
  const entries: unknown = JSON.parse(readFileSync(path, "utf8"))
  if (!Array.isArray(entries)) fail(`${path}: expected a JSON array of identity providers`)
  // The cast only names the shape: `make` decodes every entry itself and throws a RangeError naming a bad one.
  const registry = IdentityProviders.make(entries as Parameters<typeof IdentityProviders.make>[0])
  for (const provider of registry.all) {
    process.stdout.write(
      provider.kind !== "jwks"
        ? `${provider.name}  the native phone sign-in (built in)\n`
        : `${provider.name}  ${provider.issuer}  aud ${provider.audience}  ${provider.algorithms.join(",")}  id claim ${provider.subjectClaim}  ${provider.jwksUrl}\n`
    )
  }
}

/** The network `--network` names, from the networks file; fails when there is none such. */
const selectedNetwork = async (invocation: Invocation, paymasterAddressRequired = false): Promise<NetworkSettings> => {
  const names = invocation.values.network ?? []
  if (names.length !== 1) return fail("--network <name> is required, once")
  const [name = ""] = names
  const networks = await Effect.runPromise(networkSettingsFromEnv({ paymasterAddressRequired }))
  if (networks.length === 0) return fail("no networks: set WALLETGATE_NETWORKS_FILE (see docs/configuration.md)")
  return (
    findNetwork(networks, name) ??
    fail(`no network ${name} in the networks file (it has ${networks.map((network) => network.slug).join(", ")})`)
  )
}

/** An amount option (`--deposit "0.5 ether"`) in wei, or undefined when not given; fails when malformed. */
const amountOption = (invocation: Invocation, option: "deposit" | "stake"): bigint | undefined => {
  const text = invocation.values[option]
  if (text === undefined) return undefined
  try {
    return parseAmount(text)
  } catch {
    return fail(`--${option} is an amount with its unit, e.g. "0.5 ether" or "30 gwei"`)
  }
}

const deploy = async (invocation: Invocation): Promise<void> => {
  const settings = await selectedNetwork(invocation)
  const delay = invocation.values["unstake-delay"]
  if (delay !== undefined && !/^[1-9][0-9]{0,9}$/.test(delay)) fail("--unstake-delay is a whole number of seconds")
  const deployerKey = await Effect.runPromise(deployerKeyFromEnv)
  const report = await deployNetworkContracts(settings, {
    deployerKey,
    newPaymaster: invocation.values["new-paymaster"] === true,
    depositWei: amountOption(invocation, "deposit"),
    stakeWei: amountOption(invocation, "stake"),
    unstakeDelaySeconds: delay === undefined ? undefined : Number(delay)
  })
  process.stdout.write(`${deployTable(settings.slug, report)}\n`)
}

const doctor = async (invocation: Invocation): Promise<void> => {
  const settings = await selectedNetwork(invocation)
  const checks = await runDoctor(settings)
  const ok = checks.every((check) => check.status !== "fail")
  process.stdout.write(
    invocation.values.json === true
      ? `${JSON.stringify({ network: settings.slug, chainId: settings.chainId, ok, checks }, null, 2)}\n`
      : `${doctorTable(settings.slug, checks)}\n`
  )
  if (!ok) process.exitCode = 1
}

/** Runs `walletgate providers|contracts|doctor|paymaster …`. */
export const runDeployment = async (invocation: Invocation): Promise<void> => {
  const [group, command, file] = invocation.positionals
  if (group === "paymaster") {
    if (command !== "serve") return unknown("paymaster", invocation)
    const { app = [], window, port, host } = invocation.values
    return servePaymaster(await selectedNetwork(invocation, true), { apps: app, window, port, host })
  }
  if (group === "doctor") return command === undefined ? doctor(invocation) : unknown("doctor", invocation)
  if (group === "contracts") return command === "deploy" ? deploy(invocation) : unknown("contracts", invocation)
  if (command !== "check") return unknown("providers", invocation)
  checkProviders(file ?? fail("the file is required"))
}
