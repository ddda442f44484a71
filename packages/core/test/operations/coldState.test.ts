import { hashClientSecret } from "@walletgate/core/auth"
import { testUserIdentity } from "@walletgate/core/operations"
import { type Address, getAddress, parseEther, zeroAddress } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AltoInstance, startAlto } from "../../src/devnet/alto"
import { sharedDevnet } from "../devnet/shared"
import { CLIENT, freshAddress, startKernelFixture } from "../kernel/fixture"
import { oneTestKey } from "../payout/fixture"

// Issue 36: a bundler estimates an operation's call gas after simulating the operations pending in its mempool that
// it deems related (alto 0.0.20: every one with the same paymaster, whichever tenant sent it), with no margin. Another
// tenant's pending operation that creates or warms the recipients of a batch makes that estimate fall short when the
// batch executes first: it reverted out of gas, the paymaster's gas burnt and nobody paid. Here alto bundles only when
// told (its debug methods), and the victim's operation goes alone, before the other tenant's.
type Fixture = Awaited<ReturnType<typeof startKernelFixture>>

const OTHER_APP = { clientId: "wgc_other", clientSecret: "wgs_other_secret" }
const RECIPIENTS = 6
/** Payout amounts are in the asset's units: 1 wei and 1,000 wei of ETH. */
const [WEI, KILOWEI] = ["0.000000000000000001", "0.000000000000001"]

describe("an operation estimated while another tenant's pending operation warms what it touches, executed first (anvil + alto bundling on demand)", {
  tags: ["devnet"]
}, () => {
  let f: Fixture
  let alto: AltoInstance
  let entryPoint: Address
  const keys = oneTestKey()
  let bearer: Record<"victim" | "attacker", Record<string, string>>

  /** One JSON-RPC call to the test's alto: its result, or its error thrown. */
  const bundlerCall = async (method: string, params: ReadonlyArray<unknown>): Promise<unknown> => {
    const response = await fetch(alto.bundlerUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params })
    })
    const body = (await response.json()) as { result?: unknown; error?: { message: string } }
    if (body.error !== undefined) throw new Error(`${method}: ${body.error.message}`)
    return body.result
  }

  beforeAll(async () => {
    const devnet = await sharedDevnet()
    entryPoint = devnet.deployment.contracts.entryPoint
    // An alto of this file's own beside the worker's (which keeps bundling for the other files), its accounts new.
    const [executor, utility] = [generatePrivateKey(), generatePrivateKey()]
    for (const key of [executor, utility]) await devnet.setBalance(privateKeyToAccount(key).address, parseEther("10"))
    alto = await startAlto({
      rpcUrl: devnet.anvil.rpcUrl,
      entryPoints: [entryPoint],
      executorKeys: [executor],
      utilityKey: utility,
      blockTimeMs: 100,
      debugEndpoints: true
    })
    f = await startKernelFixture({
      bundlerUrl: alto.bundlerUrl,
      apps: [
        {
          clientId: OTHER_APP.clientId,
          secretHash: hashClientSecret(OTHER_APP.clientSecret),
          providers: ["phone"],
          testMode: true
        }
      ],
      automation: () => [{ accountKey: "payer" }],
      apiKeys: keys.apiKeys
    })
    bearer = {
      victim: { authorization: `Bearer ${await f.accessToken()}` },
      attacker: { authorization: `Bearer ${await f.accessToken(OTHER_APP)}` }
    }
    // Every Safe deployed first, bundled as they come: a deploying operation waits for its inclusion in the request.
    for (const [app, userId] of [
      ["victim", "phone:victim"],
      ["attacker", "phone:attacker"]
    ] as const) {
      const appId = app === "victim" ? CLIENT.clientId : OTHER_APP.clientId
      await f.fund(await f.walletOf(testUserIdentity(appId, userId)), parseEther("1"))
      const sent = await batch(app, userId, [freshAddress()], 0n)
      expect(sent.body).toMatchObject({ status: "submitted" })
      expect(await f.settled(sent.body.id, bearer[app])).toMatchObject({ status: "confirmed" })
    }
    await f.fund(payer(), parseEther("1"))
    const first = await payout([freshAddress()], WEI)
    expect(first.status).toBe(200)
    expect((await finalPayout(first.body.id)).body).toMatchObject({ status: "confirmed" })
    await bundlerCall("debug_bundler_setBundlingMode", ["manual"])
  }, 120_000)

  afterAll(async () => {
    await f?.stop()
    await alto?.stop()
  })

  const payer = () => f.automationAccounts[0]?.address as Address

  const batch = (app: "victim" | "attacker", userId: string, to: ReadonlyArray<Address>, wei: bigint) =>
    f.call(
      "POST",
      "/v1/kernel/tx",
      {
        userId,
        chain: "anvil",
        to,
        value: to.map(() => String(wei)),
        data: to.map(() => "0x"),
        auth: ""
      },
      bearer[app]
    )

  const payout = (recipients: ReadonlyArray<Address>, amount: string) =>
    f.call(
      "POST",
      `/v1/anvil/account/${payer()}/payout/disperse`,
      { assets: recipients.map(() => zeroAddress), amounts: recipients.map(() => amount), recipients },
      { "x-api-key": keys.key() }
    )

  const finalPayout = async (id: unknown) => {
    const deadline = Date.now() + 20_000
    while (true) {
      const answer = await f.call("GET", `/v1/anvil/account/${payer()}/payout/${String(id)}`, undefined, {
        "x-api-key": keys.key()
      })
      if (answer.body.status !== "submitted" || Date.now() > deadline) return answer
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  /**
   * Bundles the pending operation of `sender` alone, then the others: alto's mempool emptied, that operation sent again
   * (the same signed operation) and bundled, then the others sent again and bundled.
   */
  const executeFirst = async (sender: Address) => {
    const pending = (await bundlerCall("debug_bundler_dumpMempool", [entryPoint])) as ReadonlyArray<{
      readonly sender: string
    }>
    expect(pending).toHaveLength(2)
    const ofSender = (operation: { readonly sender: string }) => getAddress(operation.sender) === sender
    await bundlerCall("debug_bundler_clearState", [])
    for (const group of [pending.filter(ofSender), pending.filter((operation) => !ofSender(operation))]) {
      expect(group).toHaveLength(1)
      for (const operation of group) await bundlerCall("eth_sendUserOperation", [operation, entryPoint])
      await bundlerCall("debug_bundler_sendBundleNow", [])
    }
  }

  it("runs a kernel batch that pays recipients another tenant's pending batch creates, executed before it: confirmed, every recipient paid", async () => {
    const recipients = Array.from({ length: RECIPIENTS }, () => getAddress(freshAddress()))
    const attack = await batch("attacker", "phone:attacker", recipients, 1n)
    expect(attack.body).toMatchObject({ status: "submitted" })
    const victim = await batch("victim", "phone:victim", recipients, 1_000n)
    expect(victim.body).toMatchObject({ status: "submitted" })
    await executeFirst(await f.walletOf(testUserIdentity(CLIENT.clientId, "phone:victim")))
    const [victimFinal, attackFinal] = [
      await f.settled(victim.body.id, bearer.victim),
      await f.settled(attack.body.id, bearer.attacker)
    ]
    expect(victimFinal).toMatchObject({ status: "confirmed" })
    expect(attackFinal).toMatchObject({ status: "confirmed" })
    // The victim's operation ran first: its block is the attacker's or earlier.
    expect(Number(victimFinal.blockNumber)).toBeLessThan(Number(attackFinal.blockNumber))
    console.info(`${RECIPIENTS} cold ETH transfers with the floor: ${String(victimFinal.gasUsed)} gas (operation)`)
    expect(await Promise.all(recipients.map((address) => f.publicClient.getBalance({ address })))).toEqual(
      recipients.map(() => 1_001n)
    )
  })

  it("runs a payout of one operation to recipients another tenant's pending batch creates, executed before it: confirmed, every recipient paid", async () => {
    const recipients = Array.from({ length: RECIPIENTS }, () => getAddress(freshAddress()))
    const attack = await batch("attacker", "phone:attacker", recipients, 1n)
    expect(attack.body).toMatchObject({ status: "submitted" })
    const paid = await payout(recipients, KILOWEI)
    expect(paid.status).toBe(200)
    expect(paid.body).toMatchObject({ status: "submitted" })
    await executeFirst(payer())
    expect((await finalPayout(paid.body.id)).body).toMatchObject({ status: "confirmed" })
    expect(await f.settled(attack.body.id, bearer.attacker)).toMatchObject({ status: "confirmed" })
    expect(await Promise.all(recipients.map((address) => f.publicClient.getBalance({ address })))).toEqual(
      recipients.map(() => 1_001n)
    )
  })
})
