import * as Effect from "effect/Effect"
import { getAddress } from "viem"
import { type AutomationAccount, AutomationAccounts, type PayoutPlan } from "../../payout/accounts"
import { concurrently, expectEqual, type PortContractCase } from "./contract"

// Checksummed (EIP-55), as `registerAutomationAccount` saves them and as payout plans require.
const ADDRESS = getAddress("0x00000000000000000000000000000000000000cc")
const OTHER_ADDRESS = getAddress("0x00000000000000000000000000000000000000dd")
const PLAN: PayoutPlan = {
  asset: "0x0000000000000000000000000000000000000000",
  recipients: [
    { address: getAddress("0x00000000000000000000000000000000000000e1"), shareBps: 6000 },
    { address: getAddress("0x00000000000000000000000000000000000000e2"), shareBps: 4000 }
  ],
  minimumPayout: "10000000000000000",
  reserve: "100000000000000000000000000000"
}
const account = (extra: Partial<AutomationAccount> = {}): AutomationAccount => ({
  address: ADDRESS,
  network: "anvil",
  accountKey: "treasury",
  ...extra
})

const accountCase = (
  name: string,
  run: (accounts: AutomationAccounts["Service"]) => Effect.Effect<void, unknown>
): PortContractCase<AutomationAccounts> => ({ name, run: AutomationAccounts.use(run) })

/** The contract of `AutomationAccounts` (accounts and payout plans): every implementation must pass every case. */
export const automationAccountsContract: ReadonlyArray<PortContractCase<AutomationAccounts>> = [
  accountCase("finds no account that was never saved", (accounts) =>
    Effect.gen(function* () {
      yield* expectEqual("find", yield* accounts.find("anvil", ADDRESS), undefined)
    })
  ),
  accountCase("finds a saved account exactly as saved, with or without a plan", (accounts) =>
    Effect.gen(function* () {
      const planned = account({ plan: PLAN })
      const planless = account({ address: OTHER_ADDRESS, accountKey: "fees" })
      yield* accounts.save(planned)
      yield* accounts.save(planless)
      yield* expectEqual("with a plan", yield* accounts.find("anvil", ADDRESS), planned)
      yield* expectEqual("without a plan", yield* accounts.find("anvil", OTHER_ADDRESS), planless)
    })
  ),
  accountCase("keeps an account's co-owner (the customer's key, part of the Safe's address)", (accounts) =>
    Effect.gen(function* () {
      const shared = account({ coOwner: getAddress("0x00000000000000000000000000000000000000f1"), plan: PLAN })
      yield* accounts.save(shared)
      yield* expectEqual("with its co-owner", yield* accounts.find("anvil", ADDRESS), shared)
    })
  ),
  accountCase("finds an account by its address in any letter case", (accounts) =>
    Effect.gen(function* () {
      yield* accounts.save(account())
      yield* expectEqual("lower case", yield* accounts.find("anvil", ADDRESS.toLowerCase()), account())
      yield* expectEqual("upper case", yield* accounts.find("anvil", `0x${ADDRESS.slice(2).toUpperCase()}`), account())
    })
  ),
  accountCase("replaces an account saved again, its plan included", (accounts) =>
    Effect.gen(function* () {
      yield* accounts.save(account({ plan: PLAN }))
      const replanned = account({ plan: { ...PLAN, recipients: [{ address: ADDRESS, shareBps: 10_000 }] } })
      yield* accounts.save(replanned)
      yield* expectEqual("new plan", yield* accounts.find("anvil", ADDRESS), replanned)
      yield* accounts.save(account())
      yield* expectEqual("plan removed", yield* accounts.find("anvil", ADDRESS), account())
    })
  ),
  accountCase("keeps networks and addresses apart", (accounts) =>
    Effect.gen(function* () {
      const onBase = account({ network: "base", accountKey: "base-treasury", plan: PLAN })
      yield* accounts.save(account())
      yield* accounts.save(onBase)
      yield* expectEqual("anvil", yield* accounts.find("anvil", ADDRESS), account())
      yield* expectEqual("base", yield* accounts.find("base", ADDRESS), onBase)
      yield* expectEqual("other address", yield* accounts.find("anvil", OTHER_ADDRESS), undefined)
      yield* expectEqual("other network", yield* accounts.find("mainnet", ADDRESS), undefined)
    })
  ),
  accountCase("lists every account of every network once, as last saved", (accounts) =>
    Effect.gen(function* () {
      yield* expectEqual("none yet", yield* accounts.list, [])
      const onBase = account({ network: "base", accountKey: "base-treasury", plan: PLAN })
      const other = account({ address: OTHER_ADDRESS, accountKey: "fees" })
      yield* accounts.save(account())
      yield* accounts.save(onBase)
      yield* accounts.save(other)
      const replanned = account({ plan: PLAN })
      yield* accounts.save(replanned)
      const key = (a: AutomationAccount) => `${a.network}:${a.address}`
      const listed = [...(yield* accounts.list)].sort((a, b) => (key(a) < key(b) ? -1 : 1))
      yield* expectEqual(
        "listed",
        listed,
        [replanned, other, onBase].sort((a, b) => (key(a) < key(b) ? -1 : 1))
      )
    })
  ),
  accountCase("keeps every one of 20 accounts saved concurrently", (accounts) =>
    Effect.gen(function* () {
      const address = (i: number) => getAddress(`0x${String(i).padStart(40, "0")}`)
      const made = Array.from({ length: 20 }, (_, i) => account({ address: address(i), accountKey: `k${i}` }))
      yield* concurrently(20, (i) => accounts.save(made[i] ?? account()))
      const found = yield* Effect.forEach(made, (saved) => accounts.find("anvil", saved.address))
      yield* expectEqual("found", found, made)
    })
  )
]
