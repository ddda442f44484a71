// The operator console: a page over the operator API (`/v1/operator/*`), served by the gateway at `/operator`.
// Compiled to `operator/console.js` by packages/core/scripts/console-assets.ts. Every value from the API is put in
// the page with DOM APIs and `textContent`, never as markup. The operator token lives in this module's memory only:
// never in a URL, a cookie or storage (see docs/security.md, "The operator console").

/** The operator API, relative to this script (`<mount>/operator/console.js`): works under any mount. */
const API = new URL("../v1/operator/", import.meta.url)

/** The operator token, in memory only. */
let token: string | undefined

const byId = <T extends HTMLElement>(id: string): T => {
  const found = document.getElementById(id)
  if (found === null) throw new Error(`the page has no #${id}`)
  return found as T
}
const viewOf = (section: string): HTMLElement => {
  const view = byId(section).querySelector<HTMLElement>(".view")
  if (view === null) throw new Error(`#${section} has no view`)
  return view
}

/** A refusal of the operator API, with its problem's detail. */
class ApiRefusal extends Error {}

/** One operator API call; a 401 signs out (the token is wrong or was revoked). */
const call = async (method: string, path: string, body?: unknown): Promise<unknown> => {
  if (token === undefined) throw new ApiRefusal("Not signed in.")
  const response = await fetch(new URL(path, API), {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    cache: "no-store",
    credentials: "omit",
    referrerPolicy: "no-referrer"
  })
  if (response.status === 401) {
    signOut("The operator token was refused.")
    throw new ApiRefusal("The operator token was refused.")
  }
  const text = await response.text()
  const parsed: unknown = text === "" ? undefined : JSON.parse(text)
  if (!response.ok) {
    const detail = isRecord(parsed) && typeof parsed.detail === "string" ? parsed.detail : `HTTP ${response.status}`
    throw new ApiRefusal(detail)
  }
  return parsed
}

type Json = Readonly<Record<string, unknown>>
const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null
const records = (value: unknown): ReadonlyArray<Json> => (Array.isArray(value) ? value.filter(isRecord) : [])
const text = (value: unknown): string =>
  value === undefined || value === null ? "" : typeof value === "string" ? value : JSON.stringify(value)
const list = (value: unknown): string => (Array.isArray(value) ? value.map(text).join(", ") : text(value))

/** An element with its text (never parsed as markup), classes and children. */
const element = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  content: string | ReadonlyArray<Node> = "",
  className = ""
): HTMLElementTagNameMap[K] => {
  const node = document.createElement(tag)
  if (typeof content === "string") node.textContent = content
  else node.append(...content)
  if (className !== "") node.className = className
  return node
}

/** A cell: its text, or an element; `mono` for hashes and addresses. */
type Cell = string | Node | { readonly text: string; readonly className: string }

/** A table of `rows` under `headings`, or a line saying there is nothing. */
const table = (headings: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<Cell>>, empty: string): Node => {
  if (rows.length === 0) return element("p", empty, "empty")
  const head = element(
    "tr",
    headings.map((heading) => element("th", heading))
  )
  const body = rows.map((row) =>
    element(
      "tr",
      row.map((cell) =>
        typeof cell === "string"
          ? element("td", cell)
          : cell instanceof Node
            ? element("td", [cell])
            : element("td", cell.text, cell.className)
      )
    )
  )
  return element("table", [element("thead", [head]), element("tbody", body)])
}

const mono = (value: unknown): Cell => ({ text: text(value), className: "mono" })
const flag = (value: unknown): Cell =>
  value === true ? { text: "yes", className: "yes" } : value === false ? { text: "no", className: "no" } : ""

/** Wei as ether, to six decimals. */
const ether = (wei: unknown): string => {
  if (typeof wei !== "string" || !/^[0-9]{1,78}$/.test(wei)) return "unknown"
  const value = BigInt(wei)
  const whole = value / 10n ** 18n
  const fraction = ((value % 10n ** 18n) / 10n ** 12n).toString().padStart(6, "0")
  return `${whole}.${fraction} ETH`
}

const time = (iso: unknown): string => {
  if (typeof iso !== "string") return ""
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString()
}

/** Shows a secret once, in a box the operator dismisses; it is never kept anywhere else. */
const showSecret = (label: string, secret: string) => {
  byId("secret-label").textContent = label
  byId("secret-value").textContent = secret
  byId("secret").hidden = false
}
const dismissSecret = () => {
  byId("secret-value").textContent = ""
  byId("secret-label").textContent = ""
  byId("secret").hidden = true
}

const say = (message: string) => {
  byId("error").textContent = message
}
const messageOf = (error: unknown): string => (error instanceof Error ? error.message : "Something failed.")

/** Renders a section from the API: its view replaced by what `render` makes, or by the refusal. */
const load = async (section: string, render: () => Promise<Node>) => {
  const view = viewOf(section)
  try {
    view.replaceChildren(await render())
  } catch (error) {
    view.replaceChildren(element("p", messageOf(error), "error"))
  }
}

const button = (label: string, onClick: () => void): HTMLButtonElement => {
  const node = element("button", label)
  node.type = "button"
  node.addEventListener("click", onClick)
  return node
}

/** Runs a change, then refreshes; its refusal is said at the top. */
const change = async (run: () => Promise<void>) => {
  say("")
  try {
    await run()
    await refresh()
  } catch (error) {
    say(messageOf(error))
  }
}

const renderNetworks = async () =>
  table(
    ["Network", "Chain", "Healthy", "Bundler", "Paymaster", "Deposit", "Low"],
    records(await call("GET", "networks")).map((network) => {
      const bundler = isRecord(network.bundler) ? network.bundler : undefined
      const paymaster = isRecord(network.paymaster) ? network.paymaster : undefined
      return [
        text(network.network),
        text(network.chainId),
        flag(network.healthy),
        bundler === undefined
          ? "none"
          : `${bundler.reachable === true ? "reachable" : "unreachable"}${bundler.entryPointSupported === false ? ", EntryPoint unsupported" : ""}`,
        paymaster === undefined ? "none" : mono(paymaster.address),
        paymaster === undefined ? "" : ether(paymaster.depositWei),
        paymaster === undefined ? "" : flag(paymaster.low)
      ]
    }),
    "No network is served."
  )

/** The app ids and key ids known, for the operations filter. */
const owners = new Set<string>()

const renderApps = async () => {
  const [apps, budgets] = await Promise.all([call("GET", "apps"), call("GET", "budgets").catch(() => [])])
  const usage = new Map(records(budgets).map((budget) => [text(budget.clientId), budget]))
  return table(
    ["Client id", "Name", "Providers", "Test mode", "Gas today / day budget", ""],
    records(apps).map((app) => {
      const clientId = text(app.clientId)
      owners.add(clientId)
      const used = records(usage.get(clientId)?.usedToday)
        .map((day) => `${text(day.network)}: ${text(day.gas)}`)
        .join(", ")
      const budget = typeof app.gasPerDay === "number" ? String(app.gasPerDay) : "none"
      return [
        mono(clientId),
        text(app.name),
        list(app.providers),
        flag(app.testMode),
        `${used === "" ? "0" : used} / ${budget}`,
        button("Revoke", () => {
          if (!confirm(`Revoke the app ${clientId}? Its secret and tokens are refused from then on.`)) return
          void change(async () => {
            await call("DELETE", `apps/${encodeURIComponent(clientId)}`)
          })
        })
      ]
    }),
    "No app yet."
  )
}

const renderKeys = async () =>
  table(
    ["Id", "Mode", "Networks", "Accounts", "Created", "Last used", "Revoked", ""],
    records(await call("GET", "keys")).map((key) => {
      const id = text(key.id)
      owners.add(id)
      return [
        mono(id),
        text(key.mode),
        list(key.networks),
        mono(list(key.accounts)),
        time(key.createdAt),
        time(key.lastUsedAt),
        time(key.revokedAt),
        key.revokedAt === undefined
          ? button("Revoke", () => {
              if (!confirm(`Revoke the API key ${id}? It is refused from then on.`)) return
              void change(async () => {
                await call("DELETE", `keys/${encodeURIComponent(id)}`)
              })
            })
          : ""
      ]
    }),
    "No API key yet."
  )

const planOf = (plan: unknown): string => {
  if (!isRecord(plan)) return "none"
  const recipients = records(plan.recipients)
    .map((recipient) => `${text(recipient.address)} ${Number(recipient.shareBps) / 100}%`)
    .join(", ")
  return `${recipients}; asset ${text(plan.asset)}; minimum ${text(plan.minimumPayout)}; reserve ${text(plan.reserve)}`
}

const renderAccounts = async () =>
  table(
    ["Address", "Network", "Account key", "Balance", "Plan"],
    records(await call("GET", "accounts")).map((account) => [
      mono(account.address),
      text(account.network),
      text(account.accountKey),
      ether(account.balanceWei),
      planOf(account.plan)
    ]),
    "No automation account yet."
  )

const renderOperations = async () => {
  const query = new URLSearchParams()
  const app = byId<HTMLSelectElement>("filter-app").value
  const status = byId<HTMLSelectElement>("filter-status").value
  if (app !== "") query.set("app", app)
  if (status !== "") query.set("status", status)
  return table(
    ["Time", "App", "Kind", "Network", "User", "UserOpHash", "Status", "Gas used", "Transaction"],
    records(await call("GET", `operations?${query}`)).map((operation) => [
      time(operation.createdAt),
      mono(operation.app),
      text(operation.kind),
      text(operation.network),
      text(operation.user),
      mono(operation.userOpHash),
      { text: text(operation.status), className: `status status-${text(operation.status)}` },
      text(operation.gasUsed),
      mono(operation.txHash)
    ]),
    "No operation matches."
  )
}

const renderAudit = async () =>
  table(
    ["When", "Actor", "Action", "Target", "Detail", "Request id"],
    records(await call("GET", "audit?limit=100")).map((entry) => [
      time(entry.at),
      text(entry.actor),
      text(entry.action),
      mono(entry.target),
      text(entry.detail),
      mono(entry.requestId)
    ]),
    "Nothing audited yet."
  )

/** Keeps the operations filter's apps in step with the apps and keys listed, the choice kept. */
const fillOwnerFilter = () => {
  const select = byId<HTMLSelectElement>("filter-app")
  const chosen = select.value
  const options = [...owners].sort().map((owner) => {
    const option = element("option", owner)
    option.value = owner
    return option
  })
  const every = element("option", "every app")
  every.value = ""
  select.replaceChildren(every, ...options)
  select.value = owners.has(chosen) ? chosen : ""
}

/** Reads every view again. */
const refresh = async () => {
  owners.clear()
  await Promise.all([
    load("networks", renderNetworks),
    load("apps", renderApps),
    load("keys", renderKeys),
    load("accounts", renderAccounts),
    load("audit", renderAudit)
  ])
  fillOwnerFilter()
  await load("operations", renderOperations)
}

const signIn = async (given: string) => {
  token = given
  byId("sign-in-error").textContent = ""
  try {
    await call("GET", "apps")
  } catch (error) {
    if (token !== undefined) signOut(messageOf(error))
    return
  }
  byId("sign-in").hidden = true
  byId("console").hidden = false
  byId("sign-out").hidden = false
  byId("refresh").hidden = false
  await refresh()
}

/** Forgets the token and everything shown. */
function signOut(reason = "") {
  token = undefined
  dismissSecret()
  for (const view of document.querySelectorAll(".view")) view.replaceChildren()
  say("")
  byId("console").hidden = true
  byId("sign-out").hidden = true
  byId("refresh").hidden = true
  byId("sign-in").hidden = false
  byId("sign-in-error").textContent = reason
}

const commaList = (id: string): Array<string> =>
  byId<HTMLInputElement>(id)
    .value.split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")

const start = () => {
  byId("sign-in").addEventListener("submit", (event) => {
    event.preventDefault()
    const input = byId<HTMLInputElement>("token")
    const given = input.value.trim()
    input.value = ""
    if (given !== "") void signIn(given)
  })
  byId("sign-out").addEventListener("click", () => signOut())
  byId("refresh").addEventListener("click", () => void change(async () => {}))
  byId("secret-dismiss").addEventListener("click", dismissSecret)
  byId("operations-filter").addEventListener("submit", (event) => {
    event.preventDefault()
    void load("operations", renderOperations)
  })
  byId("create-app").addEventListener("submit", (event) => {
    event.preventDefault()
    void change(async () => {
      const created = await call("POST", "apps", {
        name: byId<HTMLInputElement>("app-name").value,
        providers: commaList("app-providers"),
        testMode: byId<HTMLInputElement>("app-test-mode").checked
      })
      if (!isRecord(created)) return
      showSecret(`Client secret of ${text(created.clientId)}`, text(created.clientSecret))
      byId<HTMLInputElement>("app-name").value = ""
    })
  })
  byId("create-key").addEventListener("submit", (event) => {
    event.preventDefault()
    void change(async () => {
      const created = await call("POST", "keys", {
        networks: commaList("key-networks"),
        accounts: commaList("key-accounts"),
        mode: byId<HTMLSelectElement>("key-mode").value
      })
      if (isRecord(created)) showSecret(`API key ${text(created.id)}`, text(created.key))
    })
  })

  // `#token=…` never reaches the server (a fragment is not sent); it leaves the address bar and the history entry at
  // once, before anything is fetched.
  const fragment = new URLSearchParams(location.hash.slice(1)).get("token")
  if (location.hash !== "") history.replaceState(null, "", `${location.pathname}${location.search}`)
  if (fragment !== null && fragment !== "") void signIn(fragment)
}

start()
