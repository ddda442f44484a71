import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { type Address, getAddress, zeroAddress } from "viem"
import { UnsupportedChain } from "../chain/errors"
import { Networks } from "../chain/networks"
import { AddressString, Uint256String } from "../chain/schemas"
import { accountSalt, automationIdentity } from "../operations/identity"
import { KeyVault } from "../operations/KeyVault"
import { type SafeAccount, safeAccount } from "../operations/safeAccount"
import type { StoreUnavailable } from "../state/errors"

/** The native coin in payouts: the zero address, as existing clients send it. */
export const NATIVE_ASSET = zeroAddress

/** How an account's funds are paid out: one asset, recipients by share, a minimum and a reserve. */
export const PayoutPlan = Schema.Struct({
  /** `0x000…000` for the native coin, else an ERC-20 address. */
  asset: AddressString,
  recipients: Schema.Array(
    Schema.Struct({
      address: AddressString,
      /** Share in basis points; the shares of a plan add up to 10 000. */
      shareBps: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 10_000 }))
    })
  ).check(
    Schema.makeFilter((recipients) => recipients.reduce((sum, recipient) => sum + recipient.shareBps, 0) === 10_000, {
      message: "Expected shares adding up to 10 000 basis points"
    }),
    Schema.isMinLength(1)
  ),
  /** Below this available amount (base units) nothing is paid. */
  minimumPayout: Uint256String,
  /** Kept back in the account (base units). */
  reserve: Uint256String
})
/** How an account's funds are paid out. */
export type PayoutPlan = typeof PayoutPlan.Type

/** An account the service operates for automation. */
export interface AutomationAccount {
  /** The account's checksummed address. */
  readonly address: string
  /** The network slug. */
  readonly network: string
  /** The account's name: its identity is `automationIdentity(accountKey)`, its own key domain (owner key, salt). */
  readonly accountKey: string
  /**
   * The customer's own key (an address) as a second owner of the account's Safe, threshold 1: either the gateway's
   * key or the customer's can move the funds, so the customer keeps control without the gateway. Part of what
   * decides the address.
   */
  readonly coOwner?: string
  readonly plan?: PayoutPlan
}

/**
 * The Safe of an automation account named `accountKey`: owned by `owner` (its KeyVault key, in the automation
 * domain) and, when given, by the customer's `coOwner`, threshold 1, with the identity's salt.
 */
export const automationSafe = (
  owner: Address,
  account: Pick<AutomationAccount, "accountKey" | "coOwner">
): SafeAccount =>
  safeAccount({
    owners: account.coOwner === undefined ? [owner] : [owner, getAddress(account.coOwner)],
    threshold: 1,
    saltNonce: BigInt(accountSalt(automationIdentity(account.accountKey)))
  })

/** The automation accounts and their payout plans. */
export class AutomationAccounts extends Context.Service<
  AutomationAccounts,
  {
    readonly find: (network: string, address: string) => Effect.Effect<AutomationAccount | undefined, StoreUnavailable>
    readonly save: (account: AutomationAccount) => Effect.Effect<void, StoreUnavailable>
    /** Every account on every network (an operator's listing). */
    readonly list: Effect.Effect<ReadonlyArray<AutomationAccount>, StoreUnavailable>
  }
>()("@walletgate/core/AutomationAccounts") {
  /** Accounts in this process's memory, seeded with `accounts`. */
  static readonly memory = (accounts: ReadonlyArray<AutomationAccount> = []): Layer.Layer<AutomationAccounts> =>
    Layer.sync(AutomationAccounts, () => {
      const key = (network: string, address: string) => `${network}:${address.toLowerCase()}`
      const byKey = new Map(accounts.map((account) => [key(account.network, account.address), account]))
      return AutomationAccounts.of({
        find: (network, address) => Effect.sync(() => byKey.get(key(network, address))),
        save: (account) =>
          Effect.sync(() => {
            byKey.set(key(account.network, account.address), account)
          }),
        list: Effect.sync(() => [...byKey.values()])
      })
    })
}

/**
 * Registers an automation account on `network` named `accountKey` (its owner key comes from the `KeyVault`), with the
 * customer's `coOwner` key and a payout plan when given; returns it with its Safe's counterfactual address (the
 * same on every chain), where funds can be sent before it is ever deployed.
 */
export const registerAutomationAccount = Effect.fnUntraced(function* (options: {
  readonly network: string
  readonly accountKey: string
  readonly coOwner?: string
  readonly plan?: PayoutPlan
}) {
  const network = (yield* Networks).resolve(options.network)
  if (network === undefined) return yield* new UnsupportedChain({ chain: options.network })
  const owner = yield* (yield* KeyVault).owner(automationIdentity(options.accountKey))
  const account: AutomationAccount = {
    address: automationSafe(owner.address, options).address,
    network: network.slug,
    accountKey: options.accountKey,
    ...(options.coOwner === undefined ? {} : { coOwner: getAddress(options.coOwner) }),
    ...(options.plan === undefined ? {} : { plan: options.plan })
  }
  yield* (yield* AutomationAccounts).save(account)
  return account
})
