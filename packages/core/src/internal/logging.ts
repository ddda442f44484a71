import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as LogLevel from "effect/LogLevel"
import * as References from "effect/References"

/** What a request-path service reads from its fiber once: the time, and whether an Info line would be written. */
export interface Moment {
  /** The fiber's clock, in epoch milliseconds. */
  readonly now: number
  /** Some logger is installed and the minimum level lets Info lines through. */
  readonly logsInfo: boolean
}

/**
 * The {@link Moment}, read in one step. `Clock.currentTimeMillis` is two steps, and checking the loggers
 * before a log line two more; on the request path each step is a measurable share of a sign-in. When no
 * logger would write the line, the annotations (and `Effect.annotateLogs`' copy of the services) are skipped.
 */
export const currentMoment: Effect.Effect<Moment> = Effect.withFiber((fiber) =>
  Effect.succeed({
    now: fiber.getRef(Clock.Clock).currentTimeMillisUnsafe(),
    logsInfo:
      fiber.getRef(References.CurrentLoggers).size > 0 &&
      !LogLevel.isGreaterThan(fiber.getRef(References.MinimumLogLevel), "Info")
  })
)
