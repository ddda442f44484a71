import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Result from "effect/Result"
import type { Address } from "viem"
import { entryPoint07Abi } from "viem/account-abstraction"
import { HEALTH_DEADLINE_MS, type Network, rpc } from "../chain/networks"
import { paymasterDeposit } from "../internal/telemetry"
import { Bundler } from "./Bundler"
import { canonicalSafe4337Contracts } from "./safeAccount"

/** How one network's ERC-4337 pipeline stands, as `GET /v1/health` reports it. */
export interface PipelineHealth {
  readonly network: string
  /** The bundler: did it answer `eth_supportedEntryPoints`, and with the EntryPoint? `null`: the network has no pipeline. */
  readonly bundler: { readonly reachable: boolean; readonly entryPointSupported: boolean } | null
  /**
   * The paymaster's deposit at the EntryPoint (what sponsoring spends) and whether it is below the network's low
   * mark; `depositWei` and `low` are `null` when the node did not answer. `null`: the Safes pay their own gas.
   */
  readonly paymaster: {
    readonly address: Address
    readonly depositWei: string | null
    readonly low: boolean | null
  } | null
}

/** Whether a network's pipeline can take operations: its bundler serves the EntryPoint and its paymaster is funded. */
export const pipelineHealthy = (health: PipelineHealth): boolean =>
  (health.bundler === null || health.bundler.entryPointSupported) &&
  (health.paymaster === null || health.paymaster.low === false)

/** Asks `network`'s bundler and node, each within the health deadline; never fails (what does not answer is reported). */
export const pipelineHealth = (network: Network): Effect.Effect<PipelineHealth, never, Bundler> =>
  Effect.gen(function* () {
    const settings = network.erc4337
    if (settings === undefined) return { network: network.slug, bundler: null, paymaster: null }
    const deadlineMs = Math.min(network.rpcDeadlineMs, HEALTH_DEADLINE_MS)
    const { entryPoint } = canonicalSafe4337Contracts()
    const bundler = yield* Bundler
    // A paymaster service's paymaster is known only once asked: its deposit is the service's to watch.
    const sponsor = settings.sponsor?.kind === "verifying" ? settings.sponsor : undefined
    const [served, deposit] = yield* Effect.all(
      [
        bundler
          .supportedEntryPoints(network.chainId)
          .pipe(
            Effect.timeoutOrElse({ duration: deadlineMs, orElse: () => Effect.fail("no answer" as const) }),
            Effect.result
          ),
        sponsor === undefined
          ? Effect.succeed(undefined)
          : rpc(
              network,
              "paymaster deposit",
              () =>
                network.publicClient.readContract({
                  address: entryPoint,
                  abi: entryPoint07Abi,
                  functionName: "balanceOf",
                  args: [sponsor.paymaster]
                }),
              deadlineMs
            ).pipe(Effect.result)
      ],
      { concurrency: "unbounded" }
    )
    const reachable = Result.isSuccess(served)
    if (deposit !== undefined && Result.isSuccess(deposit)) {
      yield* Metric.update(Metric.withAttributes(paymasterDeposit, { network: network.slug }), deposit.success)
    }
    return {
      network: network.slug,
      bundler: {
        reachable,
        entryPointSupported:
          reachable && served.success.some((address) => address.toLowerCase() === entryPoint.toLowerCase())
      },
      paymaster:
        sponsor === undefined || deposit === undefined
          ? null
          : Result.isSuccess(deposit)
            ? {
                address: sponsor.paymaster,
                depositWei: String(deposit.success),
                low: deposit.success < sponsor.minDepositWei
              }
            : { address: sponsor.paymaster, depositWei: null, low: null }
    }
  })
