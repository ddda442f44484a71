import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { maskPhone, type PhoneE164 } from "../auth/phone"
import { SmsDeliveryFailed } from "./errors"

/** Sends one text message. Implementations fail with {@link SmsDeliveryFailed} and never hang. */
export class SmsSender extends Context.Service<
  SmsSender,
  {
    /** Sends `body` to `to`; succeeds once the provider has accepted the message. */
    readonly send: (to: PhoneE164, body: string) => Effect.Effect<void, SmsDeliveryFailed>
    /** The provider's name in metrics (`walletgate.sms.sent`'s `provider`); default `custom`. */
    readonly provider?: string
  }
>()("@walletgate/core/SmsSender") {
  /**
   * The development outbox: prints each message (code included) to `write`, standard output by
   * default. It is not a log: never use it in production, where the codes must reach phones only.
   */
  static readonly console = (
    write: (line: string) => void = (line) => process.stdout.write(`${line}\n`)
  ): Layer.Layer<SmsSender> =>
    Layer.succeed(
      SmsSender,
      SmsSender.of({
        provider: "console",
        send: (to, body) => Effect.sync(() => write(`[walletgate sms outbox] to ${maskPhone(to)}: ${body}`))
      })
    )

  /**
   * Twilio's Programmable Messaging REST API over `fetch` (no SDK): `POST
   * {apiBase}/2010-04-01/Accounts/{accountSid}/Messages.json` with HTTP Basic auth and the form fields
   * `To`, `Body` and `From` (a number) or `MessagingServiceSid` (an `MG…` sid).
   */
  static readonly twilio = (config: TwilioConfig): Layer.Layer<SmsSender> =>
    Layer.succeed(
      SmsSender,
      SmsSender.of({
        provider: "twilio",
        send: (to, body) => {
          const form = new URLSearchParams({ To: to, Body: body })
          if (config.from.startsWith("MG")) form.set("MessagingServiceSid", config.from)
          else form.set("From", config.from)
          const base = (config.apiBase ?? "https://api.twilio.com").replace(/\/+$/, "")
          const url = `${base}/2010-04-01/Accounts/${encodeURIComponent(config.accountSid)}/Messages.json`
          const credentials = Buffer.from(`${config.accountSid}:${config.authToken}`).toString("base64")
          return postExpectingSuccess(
            "twilio",
            url,
            config.timeout,
            {
              authorization: `Basic ${credentials}`,
              "content-type": "application/x-www-form-urlencoded",
              accept: "application/json"
            },
            form.toString()
          )
        }
      })
    )

  /**
   * POSTs `{"to", "body"}` as JSON to a URL of yours (your own SMS gateway). With a `secret`, the request
   * carries `x-walletgate-signature: sha256=<hex HMAC of the body>` so the receiver can authenticate it.
   */
  static readonly webhook = (config: SmsWebhookConfig): Layer.Layer<SmsSender> =>
    Layer.succeed(
      SmsSender,
      SmsSender.of({
        provider: "webhook",
        send: (to, body) => {
          const payload = JSON.stringify({ to, body })
          const headers: Record<string, string> = { "content-type": "application/json" }
          if (config.secret !== undefined) {
            headers["x-walletgate-signature"] = `sha256=${hmacHex(config.secret, payload)}`
          }
          return postExpectingSuccess("webhook", config.url, config.timeout, headers, payload)
        }
      })
    )
}

/** Settings of {@link SmsSender.twilio}. */
export interface TwilioConfig {
  readonly accountSid: string
  readonly authToken: string
  /** The sending number (E.164) or a Messaging Service sid (`MG…`). */
  readonly from: string
  /** Default `https://api.twilio.com`; point it elsewhere for a regional edge or a test server. */
  readonly apiBase?: string
  /** How long to wait for Twilio; default 10 seconds. */
  readonly timeout?: Duration.Input
}

/** Settings of {@link SmsSender.webhook}. */
export interface SmsWebhookConfig {
  readonly url: string
  /** Key of the HMAC-SHA256 signature header; no header without it. */
  readonly secret?: string
  /** How long to wait for the webhook; default 10 seconds. */
  readonly timeout?: Duration.Input
}

const hmacHex = (secret: string, payload: string): string =>
  // Imported lazily so that runtimes without node:crypto can still use the other senders.
  process.getBuiltinModule("node:crypto").createHmac("sha256", secret).update(payload).digest("hex")

const postExpectingSuccess = (
  provider: string,
  url: string,
  timeout: Duration.Input | undefined,
  headers: Record<string, string>,
  body: string
): Effect.Effect<void, SmsDeliveryFailed> =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(url, { method: "POST", headers, body, signal })
      // Drain the body so the connection can be reused; its text may echo the number, so it is not kept.
      await response.arrayBuffer()
      return response.status
    },
    catch: (error) => new SmsDeliveryFailed({ cause: `${provider} unreachable: ${errorName(error)}` })
  }).pipe(
    Effect.timeoutOrElse({
      duration: timeout ?? Duration.seconds(10),
      orElse: () => Effect.fail(new SmsDeliveryFailed({ cause: `${provider} did not answer in time` }))
    }),
    Effect.flatMap((status) =>
      status >= 200 && status < 300
        ? Effect.void
        : Effect.fail(new SmsDeliveryFailed({ cause: `${provider} answered HTTP ${status}` }))
    )
  )

const errorName = (error: unknown): string => (error instanceof Error ? error.name : "error")
