import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SmsDeliveryFailed } from "../otp/errors"
import { SmsSender } from "../otp/SmsSender"

/** One message an {@link SmsOutbox} received. */
export interface OutboxMessage {
  readonly to: string
  readonly body: string
}

/**
 * An SMS outbox for tests: its `layer` is an `SmsSender` that keeps every message here, so a test can
 * read the code that was "sent"; `failNext` makes sends fail as a provider outage would.
 */
export class SmsOutbox {
  /** Every message accepted so far, oldest first. */
  readonly messages: Array<OutboxMessage> = []
  #failures = 0

  /** The `SmsSender` that fills this outbox. */
  readonly layer: Layer.Layer<SmsSender> = Layer.succeed(
    SmsSender,
    SmsSender.of({
      provider: "outbox",
      send: (to, body) =>
        Effect.suspend(() => {
          if (this.#failures > 0) {
            this.#failures -= 1
            return Effect.fail(new SmsDeliveryFailed({ cause: "outbox told to fail" }))
          }
          this.messages.push({ to, body })
          return Effect.void
        })
    })
  )

  /** The 6-digit code of the latest message to `to`, if any. */
  latestCode(to: string): string | undefined {
    return this.messages.findLast((message) => message.to === to)?.body.match(/\b\d{6}\b/)?.[0]
  }

  /** Makes the next `count` sends fail with `SmsDeliveryFailed`. */
  failNext(count: number): void {
    this.#failures = count
  }
}
