// `walletgate budgets …`: the apps' day budgets of sponsored gas, in the gateway's store.
import type { BudgetView } from "../operator/schemas"
import { fail, type HelpTexts, type Invocation, output, singleOption, table, unknown, wholeOption } from "./common"
import { withOperator } from "./store"

const NEEDS = `needs: REDIS_URL (and WALLETGATE_REDIS_KEY_PREFIX when the gateways set one), and WALLETGATE_NETWORKS_FILE or
  WALLETGATE_NETWORKS as the gateways read them (the use today is shown for each network)`

/** The help of `walletgate budgets` and its commands. */
export const budgetsHelp: HelpTexts = {
  budgets: `walletgate budgets: each app's day budget of sponsored gas (per network, per UTC day) and its use today.

usage:
  walletgate budgets show [--app <clientId>] [--json]
  walletgate budgets set --app <clientId> --gas-per-day <n> [--json]
${NEEDS}`,
  "budgets show": `walletgate budgets show: the day budgets of every app, or of one, with their use today.

usage:
  walletgate budgets show [--app <clientId>] [--json]
  (--json: [{ clientId, name?, gasPerDay?, usedToday: [{ network, gas }], resetsAt }])
${NEEDS}`,
  "budgets set": `walletgate budgets set: sets an app's day budget: gas per UTC day on each network, honoured by every
gateway from the app's next batch on (refused 429 when spent).

usage:
  walletgate budgets set --app <clientId> --gas-per-day <n> [--json]     (--json: the budget, as 'budgets show')
${NEEDS}`
}

const budgetRows = (budgets: ReadonlyArray<BudgetView>) =>
  table(
    ["CLIENT ID", "NAME", "GAS/DAY", "USED TODAY", "RESETS"],
    budgets.map((budget) => [
      budget.clientId,
      budget.name ?? "-",
      budget.gasPerDay === undefined ? "none" : String(budget.gasPerDay),
      budget.usedToday.map((use) => `${use.network} ${use.gas}`).join(", ") || "-",
      budget.resetsAt
    ]),
    "no apps"
  )

/** Runs `walletgate budgets <command>`. */
export const runBudgets = async (invocation: Invocation): Promise<void> => {
  const { values } = invocation
  switch (invocation.positionals[1]) {
    case "show": {
      const budgets = await withOperator({ networks: "optional" }, (operator) =>
        operator.showBudgets(singleOption(values.app, "app"))
      )
      return output(invocation, budgets, () => budgetRows(budgets))
    }
    case "set": {
      const clientId = singleOption(values.app, "app") ?? fail("--app <clientId> is required")
      const gasPerDay = wholeOption(invocation, "gas-per-day", 1, Number.MAX_SAFE_INTEGER)
      if (gasPerDay === undefined) fail("--gas-per-day <n> is required")
      const budget = await withOperator({ networks: "optional" }, (operator, call) =>
        operator.setBudget(call, clientId, gasPerDay)
      )
      return output(invocation, budget, () => budgetRows([budget]))
    }
    default:
      return unknown("budgets", invocation)
  }
}
