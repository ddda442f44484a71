// The peer of the sign-in function: better-auth's phone-number plugin (bench/betterAuth.ts) as a Lambda handler of
// HTTP API (v2) events. `POST …/signInWithOTP {"phone"}` is better-auth's `POST /api/auth/phone-number/send-otp
// {"phoneNumber"}`; every other request goes to better-auth as it is. The code goes nowhere (walletgate's runs with
// WALLETGATE_SMS=console, whose log the benchmark discards). bench/lambda.ts bundles it as the example's functions are
// bundled and measures it beside them.
import { makeBetterAuth } from "../betterAuth.ts"

const auth = makeBetterAuth(process.env.WALLETGATE_MASTER_SECRET ?? "", () => {})
/** An HTTP API (v2) event: what the handler reads of it. */
interface Event {
  readonly rawPath?: string
  readonly requestContext: { readonly http: { readonly method: string; readonly path: string } }
  readonly headers?: Readonly<Record<string, string | undefined>>
  readonly body?: string
}

/** The handler: the event as a fetch Request to better-auth, its Response as the function's result. */
export const handler = async (event: Event) => {
  const path = event.rawPath ?? event.requestContext.http.path
  const signIn = path.endsWith("/signInWithOTP")
  const body = signIn
    ? JSON.stringify({ phoneNumber: (JSON.parse(event.body ?? "{}") as { phone?: string }).phone })
    : event.body
  const headers = new Headers()
  for (const [name, value] of Object.entries(event.headers ?? {})) if (value !== undefined) headers.set(name, value)
  const method = event.requestContext.http.method
  const response = await auth.handler(
    new Request(`http://localhost${signIn ? "/api/auth/phone-number/send-otp" : path}`, {
      method,
      headers,
      ...(method === "GET" || method === "HEAD" ? {} : { body })
    })
  )
  return {
    statusCode: response.status,
    headers: Object.fromEntries(response.headers),
    body: await response.text()
  }
}
